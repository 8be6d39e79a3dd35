"""One supervised connection to the real MCP server behind the proxy.

Guarantees:

* **At most once.** :meth:`Downstream.call` sends a request exactly once; it
  is never retried, not after a timeout, a crash or a restart. ``forwarded``
  counts the requests sent.
* **Crash or hang -> one clear error, then recovery.** A call that fails
  because the server died, or that does not answer within ``call_timeout_s``,
  raises :class:`~aw_lookahead.errors.DownstreamError` saying so (and that
  the call was not retried); the server is then restarted in the background
  and the next call waits for it (up to ``start_timeout_s``).
* Concurrent calls share one session (MCP multiplexes requests by id).
"""

from __future__ import annotations

import math
from typing import Any

import anyio

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError, DownstreamError

__all__ = ["Downstream"]


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}".rstrip(": ")


def _is_protocol_answer(exc: BaseException) -> bool:
    """A JSON-RPC error the live server sent (bad params, unknown tool), not a dead link."""
    from mcp.shared.exceptions import MCPError

    return isinstance(exc, MCPError) and "closed" not in str(exc).lower()


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
        self._client: Any = None
        self._tools: list[Any] = []
        self._ready = anyio.Event()
        self._restart = anyio.Event()
        self._closing = False
        self._last_error = ""
        self._tg: Any = None

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

    def _target(self) -> Any:
        mcp = require("mcp", "mcp")
        if self.url is not None:
            return self.url
        assert self.command is not None
        return mcp.StdioServerParameters(
            command=self.command[0], args=self.command[1:], env=self._env, cwd=self._cwd
        )

    async def __aenter__(self) -> Downstream:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        self._tg.start_soon(self._supervise)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True
        self._restart.set()
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)

    async def _supervise(self) -> None:
        mcp = require("mcp", "mcp")
        backoff = 0.1
        while not self._closing:
            self._restart = anyio.Event()
            try:
                async with mcp.Client(self._target(), mode="legacy", cache=None) as client:
                    tools: list[Any] = []
                    cursor = None
                    while True:
                        page = await client.list_tools(cursor=cursor)
                        tools.extend(page.tools)
                        cursor = page.next_cursor
                        if not cursor:
                            break
                    self._client, self._tools = client, tools
                    self.generation += 1
                    self._last_error = ""
                    backoff = 0.1
                    self._ready.set()
                    await self._restart.wait()
            except Exception as exc:  # a failed start or a crash: record, back off, restart
                self._last_error = _describe(exc)
            finally:
                if self._client is not None:
                    self._client = None
                    self._ready = anyio.Event()
            if not self._closing:
                self.restarts += 1
                await anyio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)

    async def _connected(self) -> Any:
        with anyio.move_on_after(self.start_timeout_s):
            await self._ready.wait()
        client = self._client
        if client is None:
            detail = f" Last error: {self._last_error}." if self._last_error else ""
            raise DownstreamError(
                f"the downstream MCP server ({self.label}) is not available after "
                f"{self.start_timeout_s:g} s.{detail} Check that the command starts the server "
                "by itself, e.g. run it in a terminal."
            )
        return client

    def _request_restart(self, generation: int) -> None:
        """Drop connection ``generation`` now, so later calls wait for the new one."""
        if generation == self.generation and self._client is not None:
            self._client = None
            self._ready = anyio.Event()
            self._restart.set()

    async def tools(self) -> list[Any]:
        """The downstream tool definitions (``mcp.types.Tool``), as last listed."""
        await self._connected()
        return list(self._tools)

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """Send one ``tools/call`` (never retried) and return the ``CallToolResult``."""
        client = await self._connected()
        generation = self.generation
        self.forwarded += 1
        try:
            with anyio.fail_after(self.call_timeout_s if self.call_timeout_s > 0 else math.inf):
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
