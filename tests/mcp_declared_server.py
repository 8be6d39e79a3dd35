"""A real MCP server (stdio) that declares the tools it is given, exactly as written.

Usage: ``python mcp_declared_server.py TOOLS.json LEDGER``. ``TOOLS.json`` holds a list of
MCP tool definitions (name, description, inputSchema, annotations); every call the
server receives is appended to ``LEDGER`` as one JSON line ``{"name", "arguments"}``
before it answers "ok", so a test reads what really reached the server.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)


def main(tools_file: str, ledger: str) -> None:
    tools = [Tool.model_validate(t) for t in json.loads(Path(tools_file).read_text())]

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        line = json.dumps({"name": params.name, "arguments": params.arguments}) + "\n"
        async with await anyio.open_file(ledger, "a", encoding="utf-8") as fh:
            await fh.write(line)
        return CallToolResult(content=[TextContent(text="ok")])

    server: Server[Any] = Server("declared", on_list_tools=list_tools, on_call_tool=call_tool)

    async def serve() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
