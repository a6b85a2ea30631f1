"""Replicas: drive two shop servers behind nginx with the official MCP Python client.

usage: replicas.py PHASE STATE_FILE URL [URL...]

Each phase is one step of tests/replicas.rs, which starts the servers, nginx and Redis and
stops them between phases; the session handle passes from phase to phase in STATE_FILE.
Calls use the stateless 2026-07-28 protocol (server/discover, no initialize), so nginx
sends each request to the next replica; the session rides in `_meta["afd/session"]`.
Prints one line per check and a closing 'N passed, M failed'.
"""

import asyncio
import json
import sys
import time

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

results = {"passed": 0, "failed": 0}


def check(label, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {label}")
    else:
        results["failed"] += 1
        print(f"FAIL {label} {detail}")


def attr(obj, snake, camel):
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


class Client:
    """One stateless connection to URL; every call names the session in _meta."""

    def __init__(self, session, handle=None):
        self.session = session
        self.handle = handle

    async def tool(self, name, arguments):
        meta = {"afd/session": self.handle} if self.handle else None
        result = await self.session.call_tool(name, arguments, meta=meta)
        data = attr(result, "structured_content", "structuredContent")
        if data is None and result.content:
            data = json.loads(result.content[0].text)
        return data

    async def call(self, command, input=None):
        return await self.tool("afd-call", {"command": command, "input": input or {}})


def code(answer):
    error = (answer or {}).get("error") or {}
    return error.get("code", "OK")


async def stateless(url, run, legacy=False):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            if legacy:
                await session.initialize()
            else:
                await session.discover()
                check(f"{url}: 2026-07-28 negotiated", session.protocol_version == "2026-07-28",
                      session.protocol_version)
            return await run(session)


async def bind(state, urls):
    """Enter a context through one replica; every later call, on either, is bound by it."""
    async def run(session):
        client = Client(session)
        entered = await client.tool("afd-context-enter", {"context": "fulfilment"})
        check("enter fulfilment", entered["success"], entered)
        client.handle = entered["data"]["session"]
        state["session"] = client.handle
        # Four of each, so both replicas answer each kind (round robin).
        for i in range(4):
            listed = await client.call("inventory-list")
            check(f"inventory-list in fulfilment #{i}", listed["success"], listed)
            outside = await client.call("invoice-list")
            check(f"invoice-list outside fulfilment refused #{i}", code(outside) == "CONTEXT_MISMATCH", outside)
        restocked = await client.call(
            "inventory-restock", {"productId": 1, "quantity": 7, "reference": "replicas"})
        check("restock in full scope", restocked["success"], restocked)
        state["stock"] = restocked["data"]
        # Read-only on top: refusals hold on every replica.
        entered = await client.tool("afd-context-enter", {"context": "fulfilment", "scope": "read-only"})
        check("enter fulfilment read-only", entered["success"], entered)
        for i in range(4):
            refused = await client.call(
                "inventory-restock", {"productId": 1, "quantity": 1, "reference": f"refused-{i}"})
            check(f"read-only refusal #{i}", code(refused) == "FORBIDDEN", refused)
        loaded = await client.tool("afd-detail", {"command": ["order-ship"], "activate": True})
        check("activate order-ship", loaded["success"], loaded)
    await stateless(urls[0], run)


async def usage(state, urls):
    """Traffic on each replica directly; each then suggests from both."""
    def traffic(url, follower, rounds):
        async def run(session):
            for _ in range(rounds):
                client = Client(session)
                entered = await client.tool("afd-context-enter", {"context": "storefront"})
                client.handle = entered["data"]["session"]
                await client.call("product-list")
                answer = await client.call(follower, {"id": 1} if follower == "product-get" else {})
                check(f"{follower} on {url}", answer["success"], answer)
        return run
    for url, follower, rounds in [(urls[0], "product-get", 3), (urls[1], "plan-list", 2)]:
        await stateless(url, traffic(url, follower, rounds))
    # Batches are written every 500 ms and read back after each write.
    await asyncio.sleep(2.5)
    for url in urls:
        async def run(session):
            client = Client(session)
            entered = await client.tool("afd-context-enter", {"context": "storefront"})
            client.handle = entered["data"]["session"]
            await client.call("product-list")
            found = await client.tool("afd-discover", {"session": client.handle})
            suggested = [(s["command"], s["count"]) for s in found["data"].get("suggestedNext", [])]
            check(f"{url}: next after product-list comes from both replicas",
                  suggested[:2] == [("product-get", 3), ("plan-list", 2)], suggested)
        await stateless(url, run)


async def survive(state, urls):
    """One replica was killed: the session goes on through the other, nothing lost."""
    async def run(session):
        client = Client(session, state["session"])
        status = await client.tool("afd-context-list", {})
        check("still in fulfilment", status["data"]["status"]["active"] == "fulfilment", status)
        check("still read-only", status["data"]["status"]["scope"] == "read-only", status)
        check("the stack kept both frames", status["data"]["status"]["stack"] == ["fulfilment", "fulfilment"], status)
        for i in range(3):
            refused = await client.call(
                "inventory-restock", {"productId": 1, "quantity": 1, "reference": f"after-kill-{i}"})
            check(f"read-only refusal after the kill #{i}", code(refused) == "FORBIDDEN", refused)
        exited = await client.tool("afd-context-exit", {})
        check("exit to full scope", exited["success"] and exited["data"]["status"]["scope"] == "full", exited)
        listed = await client.call("inventory-list")
        check("inventory-list after the kill", listed["success"], listed)
        stock = await client.call("inventory-get", {"productId": 1})
        check("the restock made before the kill is there", stock["data"] == state["stock"], stock)
        found = await client.tool("afd-discover", {"session": client.handle, "search": "ship order", "includeLoaded": True})
        check("afd-discover answers after the kill", found["success"], found)
    await stateless(urls[0], run)


async def down(state, urls):
    """Redis is stopped: calls that need the session fail closed, retryably."""
    async def run(session):
        client = Client(session, state["session"])
        for name, input in [("inventory-list", {}),
                            ("inventory-restock", {"productId": 1, "quantity": 1, "reference": "down"})]:
            answer = await client.call(name, input)
            error = answer.get("error") or {}
            check(f"{name} refused while Redis is down", error.get("code") == "SESSION_STORE_UNAVAILABLE", answer)
            check(f"{name} refusal is retryable", error.get("retryable") is True, answer)
    await stateless(urls[0], run)


async def recover(state, urls):
    """Redis is back: calls succeed again, in the same session and context."""
    async def run(session):
        client = Client(session, state["session"])
        deadline = time.time() + 60
        while True:
            listed = await client.call("inventory-list")
            if code(listed) != "SESSION_STORE_UNAVAILABLE" or time.time() > deadline:
                break
            await asyncio.sleep(0.5)
        check("inventory-list once Redis is back", listed["success"], listed)
        status = await client.tool("afd-context-list", {})
        check("the session came back in fulfilment", status["data"]["status"]["active"] == "fulfilment", status)
    await stateless(urls[0], run)


async def legacy(state, urls):
    """2025-11-25: the HTTP session lives on one replica; sticky routing keeps it there."""
    async def run(session):
        client = Client(session)
        entered = await client.tool("afd-context-enter", {"context": "fulfilment", "scope": "read-only"})
        check("legacy: enter on the transport session", entered["success"], entered)
        for i in range(4):
            refused = await client.call(
                "inventory-restock", {"productId": 1, "quantity": 1, "reference": f"legacy-{i}"})
            check(f"legacy: read-only refusal #{i}", code(refused) == "FORBIDDEN", refused)
    await stateless(urls[0], run, legacy=True)


async def legacy_unsticky(state, urls):
    """2025-11-25 through round robin: the next replica does not know the HTTP session."""
    async def run(session):
        client = Client(session)
        for _ in range(4):
            await client.tool("afd-context-list", {})
    try:
        await asyncio.wait_for(stateless(urls[0], run, legacy=True), timeout=30)
        check("legacy: round robin loses the HTTP session", False, "every request answered")
    except Exception as error:  # the SDK raises (an exception group) on the unknown session
        # The replica that did not answer initialize knows no such session.
        check("legacy: round robin loses the HTTP session", "Session" in repr(error), repr(error))


PHASES = {
    "bind": bind,
    "usage": usage,
    "survive": survive,
    "down": down,
    "recover": recover,
    "legacy": legacy,
    "legacy-unsticky": legacy_unsticky,
}


async def main():
    phase, state_file, urls = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        with open(state_file) as f:
            state = json.load(f)
    except FileNotFoundError:
        state = {}
    try:
        await asyncio.wait_for(PHASES[phase](state, urls), timeout=120)
    except Exception as error:
        check(f"{phase}: completed", False, repr(error))
    with open(state_file, "w") as f:
        json.dump(state, f)
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


asyncio.run(main())
