"""Calls one tool of Paige's MCP endpoint with the Python `mcp` SDK (a real MCP client).

    python mcp_call.py URL TOKEN TOOL JSON_ARGS

Prints one JSON object: {"is_error": bool, "structured": ..., "text": "..."}. Used by
ui/tests/desktop-e2e.mjs to steer the desktop window the way a coding agent does.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


async def call(url, token, tool, arguments):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments)
                return {
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": "\n".join(getattr(block, "text", "") for block in result.content),
                }


def main():
    url, token, tool, arguments = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    print(json.dumps(asyncio.run(call(url, token, tool, arguments))))


if __name__ == "__main__":
    main()
