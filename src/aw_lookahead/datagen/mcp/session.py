"""The pieces every MCP family shares: a planned call, a family, a live server session.

A family plans its calls up front from the workspace it was given (it knows
which files, commits and branches exist), so a plan is a pure function of the
seeded random generator; only the observations come from the real server.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio

from aw_lookahead._extras import require
from aw_lookahead.errors import DownstreamError
from aw_lookahead.mcp.downstream import list_all_tools
from aw_lookahead.mcp.results import result_text

__all__ = ["Call", "Family", "Plan", "ServerSession", "open_session", "pick", "typo"]

CALL_TIMEOUT_S = 120.0  # a hung server fails its trajectory instead of the whole run


@dataclass(frozen=True)
class Call:
    """One planned tool call; ``expect_error`` is the family's intent (a deliberate mistake)."""

    name: str
    arguments: dict[str, Any]
    expect_error: bool = False


@dataclass
class Plan:
    """What a family asks for: a one-line task and 2-6 calls."""

    task: str
    calls: list[Call] = field(default_factory=list)

    def add(self, tool: str, expect_error: bool = False, /, **arguments: Any) -> None:
        self.calls.append(Call(tool, arguments, expect_error))


@dataclass(frozen=True)
class Family:
    """A template family: its name (the split key), server and planner."""

    name: str
    server: str
    build: Callable[[random.Random, Any], Plan]
    deterministic: bool = True


def pick(rng: random.Random, items: Sequence[Any]) -> Any:
    return items[rng.randrange(len(items))]


def typo(rng: random.Random, name: str) -> str:
    """A near-miss of ``name``: one letter of its last path part dropped, doubled or swapped.

    Only letters and digits are touched (a doubled ``/`` or ``.`` would name
    the same file), so the result always differs from ``name``.
    """
    head, slash, base = name.rpartition("/")
    stem, dot, ext = base.rpartition(".") if "." in base else (base, "", "")
    spots = [i for i in range(1, len(stem)) if stem[i].isalnum() and stem[i - 1].isalnum()]
    if not spots:
        return f"{head}{slash}{stem}s{dot}{ext}"
    i = pick(rng, spots)
    kind = rng.randrange(3)
    if kind == 0:
        new = stem[:i] + stem[i + 1 :]
    elif kind == 1:
        new = stem[:i] + stem[i] + stem[i:]
    else:
        new = stem[: i - 1] + stem[i] + stem[i - 1] + stem[i + 1 :]
    if new == stem:
        new = stem + "_old"
    return f"{head}{slash}{new}{dot}{ext}"


class ServerSession:
    """A live MCP client session with one real server (stdio)."""

    def __init__(self, client: Any, tools: list[dict[str, Any]]) -> None:
        self._client = client
        self.tools = tools

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """``(observation text, is_error)`` of one real call, rendered as the proxy records it.

        A JSON-RPC error (the server rejects the call itself: unknown tool,
        invalid parameters) becomes ``Error: MCP error <code>: <message>``, the
        way TypeScript SDK servers word their own rejections.
        """
        mcp = require("mcp", "mcp")
        from mcp.shared.exceptions import MCPError

        try:
            with anyio.fail_after(CALL_TIMEOUT_S):
                result = await self._client.call_tool(name, arguments)
        except TimeoutError as exc:
            raise DownstreamError(f"{name} did not answer within {CALL_TIMEOUT_S:g} s") from exc
        except MCPError as exc:
            text = f"MCP error {exc.error.code}: {exc.error.message}"
            result = mcp.types.CallToolResult(
                content=[mcp.types.TextContent(type="text", text=text)], is_error=True
            )
        return result_text(result), bool(result.is_error)


@asynccontextmanager
async def open_session(
    command: Sequence[str | Path],
    *,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    errlog: TextIO,
) -> AsyncIterator[ServerSession]:
    """Start ``command`` over stdio, list its tools (every page) and yield the session."""
    mcp = require("mcp", "mcp")
    from mcp.client.stdio import stdio_client

    params = mcp.StdioServerParameters(
        command=str(command[0]),
        args=[str(a) for a in command[1:]],
        env=env,
        cwd=str(cwd) if cwd is not None else None,
    )
    async with mcp.Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
        tools = await list_all_tools(client)
        dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
        yield ServerSession(client, dumped)
