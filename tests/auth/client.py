"""Auth tests: the official MCP Python SDK client (`mcp` 2.x) against an afd-rs server that
requires OAuth bearer tokens.

usage: client.py URL TOKEN      (TOKEN "" = send no Authorization header)

Connects over Streamable HTTP with `Authorization: Bearer TOKEN`, initializes, lists tools
and, if listed, calls afd-discover with {}. Prints ONE JSON object on stdout:
  {"tools": [names...], "discover": <structuredContent or null>}        exit 0
  {"error": "HTTP 401: ..."}  on any failure (HTTP status when known)    exit 1
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

last_status = {"code": None}


async def record_status(response):
    """The SDK turns an HTTP error into a generic JSON-RPC error; keep the status here."""
    if response.status_code >= 400:
        last_status["code"] = response.status_code


def leaves(error):
    """The innermost exceptions of (nested) exception groups."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def describe(error):
    message = "; ".join(f"{type(e).__name__}: {e}" for e in leaves(error))
    return f"HTTP {last_status['code']}: {message}" if last_status["code"] else message


async def run(url, token):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with create_mcp_http_client(headers=headers) as http:
        http.event_hooks = {"request": [], "response": [record_status]}
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                names = [tool.name for tool in (await session.list_tools()).tools]
                discover = None
                if "afd-discover" in names:
                    result = await session.call_tool("afd-discover", {})
                    discover = getattr(result, "structured_content", None)
                return {"tools": names, "discover": discover}


def main():
    if len(sys.argv) != 3:
        print(json.dumps({"error": "usage: client.py URL TOKEN"}))
        sys.exit(1)
    try:
        output = asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2]), timeout=30))
    except BaseException as error:  # noqa: BLE001 - every failure becomes the one JSON line
        if isinstance(error, KeyboardInterrupt):
            raise
        print(json.dumps({"error": describe(error)}))
        sys.exit(1)
    print(json.dumps(output))
    sys.exit(0)


if __name__ == "__main__":
    main()
