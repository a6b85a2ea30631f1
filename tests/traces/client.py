"""Trace tests: the official MCP Python SDK client (`mcp` 2.x) calls a tool over Streamable
HTTP with a W3C trace context in the request's `_meta` (SEP-414), as an instrumented agent
does.

usage: client.py URL TRACEPARENT TOOL ARGUMENTS_JSON

Prints ONE JSON object on stdout: {"isError": bool, "structured": ...} (exit 0), or
{"error": "..."} (exit 1).
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def run(url, traceparent, tool, arguments):
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            result = await session.call_tool(
                tool, arguments, meta={"traceparent": traceparent}
            )
            return {
                "isError": bool(result.is_error),
                "structured": getattr(result, "structured_content", None),
            }


def main():
    if len(sys.argv) != 5:
        print(json.dumps({"error": "usage: client.py URL TRACEPARENT TOOL ARGUMENTS_JSON"}))
        sys.exit(1)
    try:
        output = asyncio.run(
            asyncio.wait_for(
                run(sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])),
                timeout=30,
            )
        )
    except BaseException as error:  # noqa: BLE001 - every failure becomes the one JSON line
        if isinstance(error, KeyboardInterrupt):
            raise
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
        sys.exit(1)
    print(json.dumps(output))
    sys.exit(0)


if __name__ == "__main__":
    main()
