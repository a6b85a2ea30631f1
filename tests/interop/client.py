"""Interop: drive an afd-rs example server with the official MCP Python client.

usage: client.py SERVER_BINARY [stdio|stdio-discover|stdio-individual|http]...

For each transport: initialize (or discover), list tools, call every meta-tool and read
the structured results. Prints one line per check and a closing 'N passed, M failed'.
"""

import asyncio
import json
import socket
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

META = ["afd-discover", "afd-detail", "afd-call", "afd-batch", "afd-pipe"]
results = {"passed": 0, "failed": 0}


def check(label, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {label}")
    else:
        results["failed"] += 1
        print(f"FAIL {label} {detail}")


def attr(obj, snake, camel):
    """The 2.x SDK uses snake_case attributes, 1.x camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def structured(result):
    data = attr(result, "structured_content", "structuredContent")
    text = result.content[0].text if result.content else None
    if text is not None and data is not None:
        check("  text content equals structuredContent", json.loads(text) == data)
    return data


async def exercise(session, transport, handshake="initialize"):
    if handshake == "discover":
        # The 2026-07-28 generation: stateless, no initialize.
        found = await session.discover()
        versions = attr(found, "supported_versions", "supportedVersions")
        check(f"{transport}: server/discover lists 2026-07-28", "2026-07-28" in versions, versions)
        check(f"{transport}: discover negotiated 2026-07-28", session.protocol_version == "2026-07-28", session.protocol_version)
    else:
        init = await session.initialize()
        version = attr(init, "protocol_version", "protocolVersion")
        print(f"{transport}: negotiated protocol {version}")
        check(f"{transport}: initialize negotiated 2025-11-25", version == "2025-11-25", version)
        check(f"{transport}: server name", attr(init, "server_info", "serverInfo").name == "todo")

    tools = await session.list_tools()
    names = [tool.name for tool in tools.tools]
    check(f"{transport}: lazy lists the five meta-tools", names == META, names)
    discover_tool = tools.tools[0]
    annotations = discover_tool.annotations
    read_only = getattr(annotations, "read_only_hint", None)
    if read_only is None:
        read_only = getattr(annotations, "readOnlyHint", None)
    check(f"{transport}: afd-discover is read-only", read_only is True)

    found = await session.call_tool("afd-discover", {"search": "toggle"})
    data = structured(found)
    check(f"{transport}: afd-discover finds the toggles",
          [c["name"] for c in data["data"]["commands"]] == ["todo-toggle", "todo-toggle-batch"], data)
    check(f"{transport}: afd-discover isError false", attr(found, "is_error", "isError") is False)

    detail = structured(await session.call_tool("afd-detail", {"command": ["todo-create", "todo-craete"]}))
    check(f"{transport}: afd-detail schema", detail["data"][0]["inputSchema"]["required"] == ["title"], detail)
    check(f"{transport}: afd-detail suggestion",
          detail["data"][1]["error"]["suggestion"].startswith("Did you mean 'todo-create'"), detail)

    created = structured(await session.call_tool("afd-call", {"command": "todo-create", "input": {"title": "From Python"}}))
    check(f"{transport}: afd-call creates", created["success"] and created["data"]["title"] == "From Python", created)

    failed = await session.call_tool("afd-call", {"command": "todo-create", "input": {}})
    failed_data = structured(failed)
    is_error = attr(failed, "is_error", "isError")
    check(f"{transport}: a failure is a result with isError", is_error is True and failed_data["error"]["code"] == "VALIDATION_ERROR", failed_data)

    batch = structured(await session.call_tool("afd-batch", {"commands": [
        {"command": "todo-create", "input": {"title": "B1"}},
        {"command": "todo-stats"},
    ]}))
    check(f"{transport}: afd-batch", batch["summary"]["successCount"] == 2, batch)

    pipe = structured(await session.call_tool("afd-pipe", {"steps": [
        {"command": "todo-create", "input": {"title": "P1"}},
        {"command": "todo-toggle", "input": {"id": "$prev.id"}},
    ]}))
    check(f"{transport}: afd-pipe", pipe["success"] and pipe["data"]["completed"] is True, pipe)


async def over_stdio(binary, handshake="initialize"):
    params = StdioServerParameters(command=binary, args=["serve", "--strategy", "lazy"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, f"stdio/{handshake}", handshake)


async def individual_over_stdio(binary):
    """Each command its own tool, with its output schema: the client validates every
    successful result's structuredContent against it (and raises if it does not match)."""
    params = StdioServerParameters(command=binary, args=["serve", "--strategy", "individual"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            listed = tools["todo-list"]
            output = attr(listed, "output_schema", "outputSchema")
            check("individual: todo-list states its data's shape", output is not None
                  and "data" in output["properties"] and "success" not in output["properties"], output)
            created = structured(await session.call_tool("todo-create", {"title": "Validated"}))
            check("individual: todo-create validated against its output schema", created["success"], created)
            listed = structured(await session.call_tool("todo-list", {}))
            check("individual: todo-list validated against its output schema", listed["success"], listed)
            failed = await session.call_tool("todo-get", {"id": "missing"})
            check("individual: a failure is a tool error", attr(failed, "is_error", "isError") is True, failed)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_http(binary):
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await exercise(session, "http")
    finally:
        server.terminate()
        server.wait(timeout=10)


async def main():
    binary = sys.argv[1]
    transports = sys.argv[2:] or ["stdio", "stdio-discover", "stdio-individual", "http"]
    runs = {
        "stdio": lambda: over_stdio(binary),
        "stdio-individual": lambda: individual_over_stdio(binary),
        "stdio-discover": lambda: over_stdio(binary, "discover"),
        "http": lambda: over_http(binary),
    }
    for transport in transports:
        try:
            await asyncio.wait_for(runs[transport](), timeout=60)
        except Exception as error:  # report and carry on with the next transport
            check(f"{transport}: session completed", False, repr(error))
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


asyncio.run(main())
