"""Prints the tools of an MCP server as the official Python client receives them.

    python listing.py PROGRAM [ARGS...]

Starts PROGRAM over stdio, lists every tool (all pages) and prints one line: the tools
array as `json.dumps` writes it (default separators), each tool as the client's model
dumps it (by alias, without unset fields). The context-cost report and the `context`
benchmark count its o200k tokens; the reference TypeScript server is measured the same way.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(command):
    # The server gets this environment (the client passes only a few variables by default).
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools, params = [], None
            while True:
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                if not page.next_cursor:
                    break
                params = types.PaginatedRequestParams(cursor=page.next_cursor)
            dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
            print(json.dumps(dumped), flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: listing.py PROGRAM [ARGS...]")
    asyncio.run(main(sys.argv[1:]))
