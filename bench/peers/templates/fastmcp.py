# BANNER
"""The benchmark catalog on FastMCP, as its documentation shows: one `@mcp.tool` function per
command, typed parameters (pydantic constraints), the docstring as its description.

    python server.py --stdio        stdio
    python server.py --http PORT    streamable HTTP on 127.0.0.1:PORT/mcp, stateless, JSON answers
"""

import sys
from itertools import count
from typing import Annotated

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from pydantic import EmailStr, Field
from typing_extensions import NotRequired, TypedDict

mcp = FastMCP("fastmcp-shop")
ids = count(1)


def present(**fields):
    """The fields that are set (optional fields are left out when absent)."""
    return {k: v for k, v in fields.items() if v is not None}


# SHAPES
# TOOLS


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stdio"]:
        mcp.run(transport="stdio", show_banner=False, log_level="WARNING")
    elif sys.argv[1:2] == ["--http"] and len(sys.argv) == 3:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp",
                stateless_http=True, json_response=True, show_banner=False, log_level="WARNING")
    else:
        sys.exit("usage: python server.py --stdio | --http PORT")
