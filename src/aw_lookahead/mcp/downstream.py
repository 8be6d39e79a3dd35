"""One supervised connection to the real MCP server behind the proxy.

Guarantees:

* **At most once.** :meth:`Downstream.call` sends a request exactly once, never retried,
  not after a timeout, a crash or a restart. ``forwarded`` counts them (not the looks).
* **Crash or hang -> one clear error, then recovery.** A call that fails
  because the server died, or that does not answer within ``call_timeout_s``,
  raises :class:`~aw_lookahead.errors.DownstreamError` saying so (and that
  the call was not retried); the server is then restarted in the background
  and the next call waits for it (up to ``start_timeout_s``).
* Concurrent calls share one session (MCP multiplexes requests by id).
* **A failed start is reported at once.** When the server exits or fails to
  initialise, :meth:`Downstream.started` (and any waiting call) raises one
  :class:`~aw_lookahead.errors.DownstreamError` naming the command and the
  last lines of its stderr, instead of waiting out ``start_timeout_s``.
* **Mirrored.** The server's ``tools.listChanged`` capability is read at
  each connection; a ``notifications/tools/list_changed`` from it re-lists
  the tools and calls ``on_tools_changed``. The roots capability is declared
  and ``roots/list`` is answered by ``roots`` (the proxy's upstream client's
  roots; no roots -> the "not supported" error a client without roots gives).
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TextIO

import anyio

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError, DownstreamError, UsageError

from ._proxy_state import Arguments

logger = logging.getLogger("aw_lookahead.mcp")

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.client import Client, ClientRequestContext, IncomingMessage, Transport
    from mcp.types import CallToolResult, ErrorData, ListRootsResult, Root, Tool

__all__ = ["READ_ONLY_LOOKS", "Downstream", "list_all_tools"]

READ_ONLY_LOOKS = frozenset({"get_file_info", "list_directory", "git_branch", "read_graph"})


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


def _is_protocol_answer(exc: BaseException) -> bool:
    """A JSON-RPC error the live server sent (bad params, unknown tool), not a dead link."""
    from mcp.shared.exceptions import MCPError

    return isinstance(exc, MCPError) and "closed" not in str(exc).lower()


_NO_ROOTS = "List roots not supported"
"""Our answer to the downstream's ``roots/list`` while no client has sent roots."""


class _StderrTail:
    """The child's stderr: echoed to ours line by line, the last lines kept for errors."""

    def __init__(self, keep: int = 12, echo: TextIO | None = None) -> None:
        read_fd, write_fd = os.pipe()
        self.writer: TextIO = os.fdopen(write_fd, "w")
        self.lines: deque[str] = deque(maxlen=keep)
        self._echo = echo if echo is not None else sys.stderr
        self._thread = threading.Thread(target=self._pump, args=(read_fd,), daemon=True)
        self._thread.start()

    def _pump(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as pipe:
            for raw in pipe:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if _NO_ROOTS in line:
                    # The server reporting our own answer (no client has roots yet): the
                    # normal case before a client with roots connects, not an error.
                    logger.debug("downstream stderr: %s", line)
                    continue
                self.lines.append(line)
                try:
                    self._echo.write(line + "\n")
                    self._echo.flush()
                except (OSError, ValueError):
                    pass

    def close_writer(self) -> None:
        """Drop our copy of the pipe's write end (the child keeps its own)."""
        if not self.writer.closed:
            self.writer.close()

    def tail(self, wait_s: float = 0.5) -> str:
        """The last stderr lines joined on one line ("" when it printed nothing)."""
        self._thread.join(wait_s)  # the child has exited: let the pump drain what it wrote
        return " | ".join(line.strip() for line in self.lines if line.strip())


RootsProvider = Callable[[], Awaitable["list[Root] | None"]]


async def list_all_tools(client: Client) -> list[Tool]:
    """Every tool a connected MCP client's server lists, following ``next_cursor`` pages."""
    tools: list[Tool] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


class Downstream:
    """The real server: a command started over stdio, or a streamable-HTTP URL.

    Use as an async context manager; inside, :meth:`tools` and :meth:`call`.
    """

    def __init__(
        self,
        command: list[str] | None = None,
        *,
        url: str | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        call_timeout_s: float = 60.0,
        start_timeout_s: float = 30.0,
        roots: RootsProvider | None = None,
        on_tools_changed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        if (command is None) == (url is None):
            raise ConfigError("give the downstream server either a command (after --) or --url")
        if command is not None and not command:
            raise ConfigError("the downstream command is empty; put it after `--`")
        self.command = command
        self.url = url
        self._env = env
        self._cwd = cwd
        self.call_timeout_s = call_timeout_s
        self.start_timeout_s = start_timeout_s
        self.forwarded = 0
        self.restarts = 0
        self.generation = 0
        self._client: Client | None = None
        self._tools: list[Tool] = []
        self._ready = anyio.Event()
        self._restart = anyio.Event()
        self._closing = False
        self._last_error = ""
        self._failed = anyio.Event()
        self._tg: TaskGroup | None = None
        self._stderr: _StderrTail | None = None
        self.roots = roots
        self.on_tools_changed = on_tools_changed
        self.tools_list_changed = False
        self.asked_roots = 0
        self._roots_served = anyio.Event()

    @property
    def label(self) -> str:
        """How messages (and the proxy's ``instructions``) name the server.

        Only the executable's file name, or the URL without credentials,
        query or fragment: arguments and query strings may hold API keys,
        and these texts reach every MCP client.
        """
        from pathlib import PurePath
        from urllib.parse import urlsplit

        if self.url is None:
            return PurePath((self.command or [""])[0]).name or "(unnamed)"
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]  # drop user:password@
        return f"{parts.scheme}://{host}{parts.path}"

    @property
    def closed(self) -> bool:
        """True once the downstream was closed: it will not (re)start the server again."""
        return self._closing

    def _target(self) -> Transport | str:
        mcp = require("mcp", "mcp")
        from mcp.client.stdio import stdio_client

        if self.url is not None:
            return self.url
        assert self.command is not None
        params = mcp.StdioServerParameters(
            command=self.command[0], args=self.command[1:], env=self._env, cwd=self._cwd
        )
        self._stderr = _StderrTail()
        return stdio_client(params, errlog=self._stderr.writer)

    async def _list_roots(self, context: ClientRequestContext) -> ListRootsResult | ErrorData:
        from mcp import types

        self.asked_roots += 1
        try:
            roots = await self.roots() if self.roots is not None else None
        finally:
            self._roots_served.set()
        if roots is None:
            logger.debug("downstream asked for roots; no client has sent any, so it keeps its own")
            return types.ErrorData(code=types.INVALID_REQUEST, message=_NO_ROOTS)
        return types.ListRootsResult(roots=list(roots))

    async def _on_message(self, message: IncomingMessage) -> None:
        from mcp import types

        if isinstance(message, types.ToolListChangedNotification) and self._tg is not None:
            self._tg.start_soon(self._relist)

    async def _relist(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            self._tools = await list_all_tools(client)
        except Exception as exc:  # the server went away: the supervisor restarts it
            self._last_error = _describe(exc)
            return
        if self.on_tools_changed is not None:
            await self.on_tools_changed()

    async def roots_changed(self, wait_s: float = 5.0) -> None:
        """Tell the server the roots changed; wait (bounded) until a roots-aware one re-reads."""
        from mcp import types

        client = self._client
        if client is None:
            return  # the next connection reads the current roots at start
        self._roots_served = anyio.Event()
        try:
            await client.session.send_notification(types.RootsListChangedNotification())
        except Exception:  # the server is going away; its restart reads the current roots
            return
        if self.asked_roots:
            with anyio.move_on_after(wait_s):
                await self._roots_served.wait()

    async def __aenter__(self) -> Downstream:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._supervise)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True
        self._restart.set()
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
            await self._tg.__aexit__(None, None, None)

    async def _supervise(self) -> None:
        mcp = require("mcp", "mcp")
        backoff = 0.1
        while not self._closing:
            self._restart = anyio.Event()
            connected = False
            try:
                target = self._target()
                async with mcp.Client(
                    target,
                    mode="legacy",
                    cache=None,
                    list_roots_callback=self._list_roots,
                    message_handler=self._on_message,
                ) as client:
                    self._close_stderr_writer()
                    tools = await list_all_tools(client)
                    caps = client.server_capabilities.tools
                    self.tools_list_changed = bool(caps is not None and caps.list_changed)
                    self._client, self._tools = client, tools
                    connected = True
                    self.generation += 1
                    self._last_error = ""
                    backoff = 0.1
                    self._ready.set()
                    await self._restart.wait()
            except Exception as exc:  # a failed start or a crash: record, back off, restart
                self._last_error = self._failure_text(exc)
                if not connected:
                    failed, self._failed = self._failed, anyio.Event()
                    failed.set()
            finally:
                self._close_stderr_writer()
                if self._client is not None:
                    self._client = None
                    self._ready = anyio.Event()
            if not self._closing:
                self.restarts += 1
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    def _close_stderr_writer(self) -> None:
        if self._stderr is not None:
            self._stderr.close_writer()

    def _failure_text(self, exc: BaseException) -> str:
        text = _describe(exc)
        tail = self._stderr.tail() if self._stderr is not None else ""
        return f"{text}; its stderr ends with: {tail}" if tail else text

    async def _connected(self) -> Client:
        if self._client is not None:
            return self._client
        failed = self._failed
        with anyio.move_on_after(self.start_timeout_s):
            async with anyio.create_task_group() as tg:

                async def until(event: anyio.Event) -> None:
                    await event.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(until, self._ready)
                tg.start_soon(until, failed)
        client = self._client
        if client is None:
            if failed.is_set():
                raise DownstreamError(
                    f"the downstream MCP server ({self.label}) did not start: "
                    f"{self._last_error}. Check the command and its arguments by running it in "
                    "a terminal."
                )
            detail = f" Last error: {self._last_error}." if self._last_error else ""
            raise DownstreamError(
                f"the downstream MCP server ({self.label}) is not available after "
                f"{self.start_timeout_s:g} s.{detail} Check that the command starts the server "
                "by itself, e.g. run it in a terminal."
            )
        return client

    async def started(self) -> None:
        """Wait for the first connection; raise :class:`DownstreamError` as soon as it fails."""
        await self._connected()

    def _request_restart(self, generation: int) -> None:
        """Drop connection ``generation`` now, so later calls wait for the new one."""
        if generation == self.generation and self._client is not None:
            self._client = None
            self._ready = anyio.Event()
            self._restart.set()

    async def tools(self) -> list[Tool]:
        """The downstream tool definitions (``mcp.types.Tool``), as last listed."""
        await self._connected()
        return list(self._tools)

    async def call(self, name: str, arguments: Arguments, *, look: bool = False) -> CallToolResult:
        """Send one ``tools/call`` (never retried) and return the ``CallToolResult``; with
        ``look``, one of :data:`READ_ONLY_LOOKS` to look at the state: not counted as
        forwarded, its failure raised as is (nothing restarts)."""
        if look and name not in READ_ONLY_LOOKS:
            raise UsageError(f"{name!r} is not a read-only look: one of {sorted(READ_ONLY_LOOKS)}")
        client = await self._connected()
        timeout = self.call_timeout_s if self.call_timeout_s > 0 else math.inf
        if look:
            with anyio.fail_after(timeout):
                return await client.call_tool(name, arguments)
        generation = self.generation
        self.forwarded += 1
        try:
            with anyio.fail_after(timeout):
                return await client.call_tool(name, arguments)
        except TimeoutError as exc:
            self._request_restart(generation)
            raise DownstreamError(
                f"the downstream MCP server ({self.label}) did not answer {name!r} within "
                f"{self.call_timeout_s:g} s; it is being restarted. The call was sent once and "
                "NOT retried: it may or may not have taken effect, so check before repeating it."
            ) from exc
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            text = _describe(exc)
            if _is_protocol_answer(exc):
                raise DownstreamError(
                    f"the downstream MCP server answered {name!r} with an error: {text}"
                ) from exc
            if "output schema" in text or "structured content" in text:
                raise DownstreamError(
                    f"the downstream server's answer to {name!r} is invalid: {text}"
                ) from exc
            self._request_restart(generation)
            raise DownstreamError(
                f"the downstream MCP server ({self.label}) failed during {name!r} ({text}); it "
                "is being restarted. The call was sent once and NOT retried: it may or may not "
                "have taken effect, so check before repeating it."
            ) from exc
