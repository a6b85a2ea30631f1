"""Rich results and a server that talks to its client, through the official MCP Python
client: drives tests/bin/client_fixture.rs.

usage: rich.py FIXTURE_BINARY [stdio|http]...

Per transport, a client that declares sampling and elicitation (answering from scripts)
and one that declares neither: content blocks of every kind, log levels (setLevel,
messages above and below it, tracing events), progress, sampling, elicitation (accept,
decline, cancel, defaults, enums) and confirmation by elicitation. Prints one line per
check and a closing 'N passed, M failed'.
"""

import asyncio
import warnings
import base64
import json
import socket
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

results = {"passed": 0, "failed": 0}
# The 2026-07-28 revision deprecates logging; this server speaks 2025-11-25, where it is current.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")


def check(label, condition, detail=""):
    if condition:
        results["passed"] += 1
        print(f"ok   {label}")
    else:
        results["failed"] += 1
        print(f"FAIL {label} {detail}")


def dump(block):
    return block.model_dump(by_alias=True, exclude_none=True, mode="json")


class Client:
    """The callbacks of a client that can sample and elicit: elicitation answers come from
    a script, one per request; every request and log message is kept."""

    def __init__(self):
        self.answers = []
        self.elicited = []
        self.sampled = []
        self.logs = []

    async def sampling(self, context, params):
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="This is a test response from the client"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(self, context, params):
        self.elicited.append(params)
        action, content = self.answers.pop(0)
        return types.ElicitResult(action=action, content=content)

    async def logging(self, params):
        self.logs.append(params)


def data_of(result):
    return (result.structured_content or {}).get("data")


def error_code(result):
    return ((result.structured_content or {}).get("error") or {}).get("code")


async def content_blocks(session, t):
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(f"{t}: a content-only tool advertises no output schema", tools["test_image_content"].output_schema is None)
    check(f"{t}: a tool with data keeps its output schema", tools["chart"].output_schema is not None)

    image = await session.call_tool("test_image_content", {})
    blocks = [dump(b) for b in image.content]
    check(f"{t}: image block", blocks and blocks[0]["type"] == "image" and blocks[0]["mimeType"] == "image/png"
          and base64.b64decode(blocks[0]["data"]).startswith(b"\x89PNG"), blocks)
    check(f"{t}: a content-only result has no structuredContent", image.structured_content is None and not image.is_error)

    audio = [dump(b) for b in (await session.call_tool("test_audio_content", {})).content]
    check(f"{t}: audio block", audio and audio[0]["type"] == "audio" and audio[0]["mimeType"] == "audio/wav", audio)

    embedded = [dump(b) for b in (await session.call_tool("test_embedded_resource", {})).content]
    check(f"{t}: embedded resource", embedded == [{"type": "resource", "resource": {
        "uri": "test://embedded-resource", "mimeType": "text/plain",
        "text": "This is an embedded resource content."}}], embedded)

    mixed = [dump(b) for b in (await session.call_tool("test_multiple_content_types", {})).content]
    check(f"{t}: mixed content in order", [b["type"] for b in mixed] == ["text", "image", "resource", "resource", "resource_link"], mixed)
    check(f"{t}: a binary resource is a blob", mixed[3]["resource"].get("blob") == base64.b64encode(bytes([0, 1, 2, 255])).decode(), mixed[3])
    check(f"{t}: a resource link", mixed[4]["uri"] == "test://linked" and mixed[4]["name"] == "linked.txt", mixed[4])

    chart = await session.call_tool("chart", {})
    blocks = [dump(b) for b in chart.content]
    check(f"{t}: data beside content: structuredContent holds the data", data_of(chart) == {"rows": 2}, chart.structured_content)
    check(f"{t}: data beside content: the image, then the JSON text",
          [b["type"] for b in blocks] == ["image", "text"] and json.loads(blocks[1]["text"]) == chart.structured_content, blocks)


async def logs_arrive(client, count):
    """Log messages come on the request's stream over stdio, before its answer; over HTTP
    rmcp sends them on the session's standalone stream, which may deliver them after the
    answer: wait for them (a deadline, not a timing check)."""
    deadline = time.time() + 10
    while len(client.logs) < count and time.time() < deadline:
        await asyncio.sleep(0.05)


async def logging(session, client, t):
    client.logs.clear()
    await session.call_tool("log-levels", {})
    await logs_arrive(client, 8)
    levels = [m.level for m in client.logs]
    check(f"{t}: before setLevel, info and above, no tracing events",
          levels == ["info", "notice", "warning", "error", "critical", "alert", "emergency", "notice"], levels)
    check(f"{t}: structured log data", client.logs[-1].data == {"structured": True} if client.logs else False)

    await session.set_logging_level("warning")
    client.logs.clear()
    await session.call_tool("log-levels", {})
    await logs_arrive(client, 6)
    seen = [(m.level, m.data) for m in client.logs]
    check(f"{t}: setLevel warning: warning and above, with the tracing warning",
          seen == [("warning", "at warning"), ("error", "at error"), ("critical", "at critical"),
                   ("alert", "at alert"), ("emergency", "at emergency"), ("warning", "a tracing warning")], seen)
    check(f"{t}: a tracing event names its target as logger", client.logs[-1].logger == "afd_client_fixture" if client.logs else False,
          client.logs[-1] if client.logs else None)

    await session.set_logging_level("debug")
    client.logs.clear()
    await session.call_tool("log-levels", {})
    await logs_arrive(client, 11)
    levels = [m.level for m in client.logs]
    check(f"{t}: setLevel debug: every level and both tracing events", levels.count("debug") == 2 and len(levels) == 11, levels)
    debug_event = [m.data for m in client.logs if m.level == "debug"][-1:]
    check(f"{t}: a tracing event's fields are its data", debug_event == [{"message": "a tracing debug event", "step": 1}], debug_event)

    client.logs.clear()
    await session.call_tool("test_tool_with_logging", {})
    await logs_arrive(client, 3)
    check(f"{t}: test_tool_with_logging sends three messages", len(client.logs) == 3, client.logs)


async def progress(session, t):
    updates = []

    async def on_progress(value, total, message):
        updates.append(value)

    await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
    check(f"{t}: three progress notifications, growing", updates == [0.0, 50.0, 100.0], updates)


async def asking(session, client, t):
    sampled = await session.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
    text = sampled.content[0].text if sampled.content else ""
    check(f"{t}: sampling asked the client's model", len(client.sampled) == 1
          and client.sampled[0].messages[0].content.text == "Test prompt for sampling"
          and client.sampled[0].max_tokens == 100, client.sampled)
    check(f"{t}: sampling answer returned", "This is a test response from the client" in text and "test-model" in text, text)

    client.answers = [("accept", {"username": "testuser", "email": "test@example.com"}), ("decline", None), ("cancel", None)]
    accepted = await session.call_tool("test_elicitation", {"message": "Please provide your information"})
    check(f"{t}: elicitation accepted", data_of(accepted) == {"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}}, accepted)
    form = client.elicited[-1]
    check(f"{t}: the form is the type's fields", form.message == "Please provide your information"
          and form.requested_schema["properties"]["email"] == {"type": "string", "description": "User's email address."}
          and sorted(form.requested_schema.get("required", [])) == ["email", "username"], form.requested_schema)
    declined = await session.call_tool("test_elicitation", {"message": "Again?"})
    check(f"{t}: elicitation declined", data_of(declined) == {"action": "decline"}, declined)
    cancelled = await session.call_tool("test_elicitation", {"message": "Again?"})
    check(f"{t}: elicitation cancelled", data_of(cancelled) == {"action": "cancel"}, cancelled)

    client.answers = [("accept", {"name": "Jane Smith", "age": 25, "score": 88, "status": "inactive", "verified": False})]
    defaults = await session.call_tool("test_elicitation_sep1034_defaults", {})
    props = client.elicited[-1].requested_schema["properties"]
    check(f"{t}: defaults for every primitive (SEP-1034)",
          (props["name"]["default"], props["age"]["default"], props["score"]["default"], props["status"]["default"], props["verified"]["default"])
          == ("John Doe", 30, 95.5, "active", True)
          and props["age"]["type"] == "integer" and props["score"]["type"] == "number"
          and props["status"]["enum"] == ["active", "inactive", "pending"], props)
    check(f"{t}: the defaults form's answer decoded", data_of(defaults)["content"]["status"] == "inactive", defaults)

    client.answers = [("accept", {"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
                                   "untitledMulti": ["option1", "option2"], "titledMulti": ["value1", "value2"]})]
    enums = await session.call_tool("test_elicitation_sep1330_enums", {})
    props = client.elicited[-1].requested_schema["properties"]
    check(f"{t}: untitled single-select is an enum", props["untitledSingle"]["type"] == "string"
          and props["untitledSingle"]["enum"] == ["option1", "option2", "option3"] and "oneOf" not in props["untitledSingle"], props["untitledSingle"])
    check(f"{t}: titled single-select is oneOf const/title", props["titledSingle"]["type"] == "string"
          and props["titledSingle"]["oneOf"][0] == {"const": "value1", "title": "First Option"}, props["titledSingle"])
    check(f"{t}: multi-selects are arrays of enum or anyOf", props["untitledMulti"]["items"]["enum"] == ["option1", "option2", "option3"]
          and props["titledMulti"]["items"]["anyOf"][2] == {"const": "value3", "title": "Third Option"}, props)
    check(f"{t}: a raw schema passes through (legacy enumNames)", props["legacyEnum"]["enumNames"][0] == "Option One", props["legacyEnum"])
    check(f"{t}: the enums form's answer", data_of(enums)["action"] == "accept", enums)

    client.answers = [("decline", None), ("cancel", None), ("accept", {"confirm": False}), ("accept", {"confirm": True})]
    for action in ["decline", "cancel", "unticked"]:
        refused = await session.call_tool("forget", {"name": "Ann"})
        check(f"{t}: confirmation {action}: not run, a structured refusal", refused.is_error and error_code(refused) == "CONFIRMATION_REQUIRED", refused)
    check(f"{t}: the confirmation asks with the filled prompt", client.elicited[-1].message == "Really forget Ann?", client.elicited[-1])
    confirmed = await session.call_tool("forget", {"name": "Ann"})
    check(f"{t}: confirmation accepted: the command ran", data_of(confirmed) == "Forgot Ann", confirmed)


async def without_capabilities(session, t):
    sampled = await session.call_tool("test_sampling", {"prompt": "x"})
    check(f"{t}: no sampling capability: CLIENT_CANNOT_SAMPLE", sampled.is_error and error_code(sampled) == "CLIENT_CANNOT_SAMPLE", sampled)
    elicited = await session.call_tool("test_elicitation", {"message": "x"})
    check(f"{t}: no elicitation capability: CLIENT_CANNOT_ELICIT", elicited.is_error and error_code(elicited) == "CLIENT_CANNOT_ELICIT", elicited)
    forgot = await session.call_tool("forget", {"name": "Bo"})
    check(f"{t}: no elicitation: a confirm_prompt command runs as before", data_of(forgot) == "Forgot Bo", forgot)


async def run_sessions(t, connect):
    client = Client()
    async with connect() as streams:
        async with ClientSession(streams[0], streams[1], sampling_callback=client.sampling,
                                 elicitation_callback=client.elicitation, logging_callback=client.logging) as session:
            init = await session.initialize()
            check(f"{t}: the server declares logging", init.capabilities.logging is not None, init.capabilities)
            await content_blocks(session, t)
            await logging(session, client, t)
            await progress(session, t)
            await asking(session, client, t)
    async with connect() as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            await without_capabilities(session, f"{t}/plain")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_stdio(binary):
    params = StdioServerParameters(command=binary, args=["serve", "--strategy", "individual"])
    await run_sessions("stdio", lambda: stdio_client(params))


async def over_http(binary):
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--strategy", "individual", "--http", f"127.0.0.1:{port}"],
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        await run_sessions("http", lambda: streamable_http_client(f"http://127.0.0.1:{port}/mcp"))
    finally:
        server.terminate()
        server.wait(timeout=10)


async def main():
    binary = sys.argv[1]
    runs = {"stdio": over_stdio, "http": over_http}
    for transport in sys.argv[2:] or ["stdio", "http"]:
        try:
            await asyncio.wait_for(runs[transport](binary), timeout=120)
        except Exception as error:  # report and carry on with the next transport
            check(f"{transport}: sessions completed", False, repr(error))
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


asyncio.run(main())
