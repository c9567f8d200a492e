"""Black-box check of Paige's MCP endpoint with the Python `mcp` SDK (another ecosystem).

    python mcp_client.py URL TOKEN

Lists the tools, calls a read tool, a UI tool and a session tool with the bearer token,
then tries once without the token. Prints one JSON object with what it saw; the Rust test
in tests/e2e/blackbox.rs asserts on it.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def session_calls(url, token):
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                opened = await session.call_tool("paige_open_file", {"path": "src/app.py"})
                diff = await session.call_tool("paige_get_diff", {})
                state = await session.call_tool("paige_get_session_state", {"include": ["session", "open_files"]})
                missing = await session.call_tool("paige_open_file", {"path": "../../etc/passwd"})
                return {
                    "protocol": str(init.protocol_version),
                    "server": init.server_info.name,
                    "tools": sorted(t.name for t in tools.tools),
                    "open_file": {"is_error": bool(opened.is_error), "structured": opened.structured_content},
                    "diff": {"is_error": bool(diff.is_error), "structured": diff.structured_content},
                    "state": {"is_error": bool(state.is_error), "structured": state.structured_content},
                    "traversal": {"is_error": bool(missing.is_error), "text": text_of(missing)},
                }


async def without_token(url):
    statuses = []

    async def record(response):
        statuses.append(response.status_code)

    try:
        async with create_mcp_http_client() as http:
            http.event_hooks["response"].append(record)
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await asyncio.wait_for(session.initialize(), timeout=10)
        return "connected"
    except BaseException as err:  # the SDK raises (possibly grouped) HTTP errors
        return f"refused: HTTP {statuses} ({type(err).__name__})"


async def main():
    url, token = sys.argv[1], sys.argv[2]
    report = await session_calls(url, token)
    report["without_token"] = await without_token(url)
    print(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
