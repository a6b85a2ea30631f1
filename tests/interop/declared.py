"""Declared resources, prompts and completions through the official MCP Python client.

usage: declared.py FIXTURE_BINARY

Over stdio: resources (list, read text and binary, a template), prompts (list, get simple,
with arguments, with an embedded resource, with an image), completions (a prompt argument,
a template variable), the errors for an unknown URI, an unknown prompt and a missing
argument, and a subscription (updated while subscribed, silent after unsubscribing).
Over streamable HTTP, two sessions of one server: an update reaches the subscribed session
and not the other. Prints one line per check and a closing 'N passed, M failed'.
"""

import asyncio
import base64
import socket
import subprocess
import sys
import time
import warnings

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

# resources/subscribe belongs to the 2025 protocol generation this test speaks on purpose.
warnings.filterwarnings("ignore", message="resources/(un)?subscribe is removed")

results = {"passed": 0, "failed": 0}
WATCHED = "test://watched-resource"
STATIC = "test://static-text"


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


class Updates:
    """The resources/updated notifications one session received, in order."""

    def __init__(self):
        self.uris = []
        self.changed = asyncio.Condition()

    async def handler(self, message):
        if isinstance(message, types.ResourceUpdatedNotification):
            async with self.changed:
                self.uris.append(str(message.params.uri))
                self.changed.notify_all()

    async def wait_for(self, count):
        """Until `count` notifications have arrived (the caller's timeout bounds it)."""
        async with self.changed:
            await self.changed.wait_for(lambda: len(self.uris) >= count)
        return self.uris[:count]


async def error_of(call):
    try:
        await call
    except MCPError as error:
        return error
    return None


async def touch(session, uri):
    """Calls the fixture's touch-resource command; how many sessions it told."""
    called = await session.call_tool("afd-call", {"command": "touch-resource", "input": {"uri": uri}})
    data = attr(called, "structured_content", "structuredContent")
    return data["data"] if data and data.get("success") else None


async def exercise(session, updates):
    init = await session.initialize()
    capabilities = attr(init, "capabilities", "capabilities")
    resources_cap = capabilities.resources
    check("initialize: resources with subscribe", resources_cap is not None and resources_cap.subscribe is True, resources_cap)
    check("initialize: prompts", capabilities.prompts is not None)
    check("initialize: completions", capabilities.completions is not None)

    listed = {str(r.uri): r for r in (await session.list_resources()).resources}
    check("resources/list: the declared resources", {STATIC, "test://static-binary", WATCHED} <= set(listed), sorted(listed))
    check("resources/list: the catalog's own too", "afd://catalog" in listed, sorted(listed))
    check("resources/list: name and media type", listed[STATIC].name == "static-text"
          and attr(listed[STATIC], "mime_type", "mimeType") == "text/plain", listed[STATIC])
    check("resources/list: description from the doc comment", listed[STATIC].description == "A static text resource.", listed[STATIC])

    templates = {attr(t, "uri_template", "uriTemplate"): t for t in (await session.list_resource_templates()).resource_templates}
    check("resources/templates/list: the declared template", "test://template/{id}/data" in templates, sorted(templates))
    check("resources/templates/list: the catalog's too", "afd://commands/{name}" in templates, sorted(templates))

    text = (await session.read_resource(STATIC)).contents[0]
    check("read text", text.text == "This is the content of the static text resource."
          and attr(text, "mime_type", "mimeType") == "text/plain" and str(text.uri) == STATIC, text)
    binary = (await session.read_resource("test://static-binary")).contents[0]
    check("read binary", base64.b64decode(binary.blob).startswith(b"\x89PNG")
          and attr(binary, "mime_type", "mimeType") == "image/png", binary)
    templated = (await session.read_resource("test://template/123/data")).contents[0]
    check("read through a template", str(templated.uri) == "test://template/123/data"
          and '"id":"123"' in templated.text and "Data for ID: 123" in templated.text, templated)

    missing = await error_of(session.read_resource("test://nothing-here"))
    check("read an unknown URI: -32002", missing is not None and missing.code == -32002
          and "test://nothing-here" in missing.message, repr(missing))
    check("read an unknown URI: a suggestion", missing is not None and missing.data
          and "test://static-text" in missing.data.get("suggestion", ""), repr(missing))

    prompts = {p.name: p for p in (await session.list_prompts()).prompts}
    check("prompts/list: the four prompts", {"test_simple_prompt", "test_prompt_with_arguments",
          "test_prompt_with_embedded_resource", "test_prompt_with_image"} <= set(prompts), sorted(prompts))
    with_args = prompts["test_prompt_with_arguments"]
    arguments = [(a.name, a.required, a.description) for a in with_args.arguments]
    check("prompts/list: arguments from the struct", arguments == [
        ("arg1", True, "First test argument."), ("arg2", True, "Second test argument.")], arguments)
    check("prompts/list: no arguments listed for a prompt without", not prompts["test_simple_prompt"].arguments)

    simple = await session.get_prompt("test_simple_prompt")
    check("prompts/get simple", simple.messages[0].role == "user"
          and simple.messages[0].content.text == "This is a simple prompt for testing.", simple)
    check("prompts/get: the description", simple.description == "A simple prompt without arguments.", simple.description)
    argued = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
    check("prompts/get with arguments", argued.messages[0].content.text
          == "Prompt with arguments: arg1='hello', arg2='world'", argued)
    embedded = await session.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"})
    first = embedded.messages[0].content
    check("prompts/get with an embedded resource", first.type == "resource"
          and str(first.resource.uri) == "test://example-resource"
          and first.resource.text == "Embedded resource content for testing.", first)
    imaged = await session.get_prompt("test_prompt_with_image")
    image = imaged.messages[0].content
    check("prompts/get with an image", image.type == "image" and attr(image, "mime_type", "mimeType") == "image/png"
          and base64.b64decode(image.data).startswith(b"\x89PNG"), image)

    missing_arg = await error_of(session.get_prompt("test_prompt_with_arguments", {"arg1": "only"}))
    check("prompts/get without a required argument: -32602", missing_arg is not None and missing_arg.code == -32602
          and "arg2" in missing_arg.message, repr(missing_arg))
    unknown = await error_of(session.get_prompt("test_simple_promt"))
    check("prompts/get an unknown prompt: -32602 with a suggestion", unknown is not None and unknown.code == -32602
          and "test_simple_prompt" in (unknown.data or {}).get("suggestion", ""), repr(unknown))

    completed = await session.complete(types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                       {"name": "arg1", "value": "tes"})
    check("completion of a prompt argument", completed.completion.values == ["test", "testing"], completed)
    completed = await session.complete(types.ResourceTemplateReference(type="ref/resource", uri="test://template/{id}/data"),
                                       {"name": "id", "value": "12"})
    check("completion of a template variable", completed.completion.values == ["123", "124"]
          and completed.completion.total == 2, completed)
    nothing = await session.complete(types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                                     {"name": "arg2", "value": "x"})
    check("completion without a function: no values", nothing.completion.values == [], nothing)

    await session.subscribe_resource(WATCHED)
    check("updated while subscribed: one session told", await touch(session, WATCHED) == 1)
    got = await asyncio.wait_for(updates.wait_for(1), timeout=20)
    check("updated while subscribed: notifications/resources/updated", got == [WATCHED], got)
    await session.unsubscribe_resource(WATCHED)
    check("after unsubscribing: nobody told", await touch(session, WATCHED) == 0)
    refused = await error_of(session.subscribe_resource("test://nothing-here"))
    check("subscribe to an unknown URI: -32002", refused is not None and refused.code == -32002, repr(refused))


async def over_stdio(binary):
    updates = Updates()
    params = StdioServerParameters(command=binary, args=["serve"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=updates.handler) as session:
            await exercise(session, updates)
    check("stdio: no other update arrived", updates.uris == [WATCHED], updates.uris)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def over_http(binary):
    """Two sessions of one server: A subscribes to the watched resource, B to the static
    one. Each check of silence is followed by an update the session does receive, so the
    notification that must not come would have come before it."""
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        a_updates, b_updates = Updates(), Updates()
        async with streamable_http_client(url) as a_streams, streamable_http_client(url) as b_streams:
            async with ClientSession(a_streams[0], a_streams[1], message_handler=a_updates.handler) as a, \
                    ClientSession(b_streams[0], b_streams[1], message_handler=b_updates.handler) as b:
                await a.initialize()
                await b.initialize()
                await a.subscribe_resource(WATCHED)
                await b.subscribe_resource(STATIC)
                check("http: B's touch tells one session", await touch(b, WATCHED) == 1)
                got = await asyncio.wait_for(a_updates.wait_for(1), timeout=20)
                check("http: the subscribed session A is told", got == [WATCHED], got)
                await touch(a, STATIC)
                got = await asyncio.wait_for(b_updates.wait_for(1), timeout=20)
                check("http: B heard only of its own resource", got == [STATIC], got)
                await a.unsubscribe_resource(WATCHED)
                await a.subscribe_resource(STATIC)
                check("http: after A unsubscribed, nobody is told", await touch(b, WATCHED) == 0)
                await touch(b, STATIC)
                got = await asyncio.wait_for(a_updates.wait_for(2), timeout=20)
                check("http: A heard nothing more of the watched resource", got == [WATCHED, STATIC], got)
    finally:
        server.terminate()
        server.wait(timeout=10)


async def main():
    binary = sys.argv[1]
    for name, run in [("stdio", over_stdio), ("http", over_http)]:
        try:
            await asyncio.wait_for(run(binary), timeout=90)
        except Exception as error:  # report and carry on with the next transport
            check(f"{name}: session completed", False, repr(error))
    print(f"{results['passed']} passed, {results['failed']} failed")
    sys.exit(1 if results["failed"] else 0)


asyncio.run(main())
