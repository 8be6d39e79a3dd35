"""Serve an MCP server (``MCPServer`` or low-level ``Server``) over stdio or streamable HTTP.

HTTP binds to 127.0.0.1 unless told otherwise. With ``auth_token`` every
request must carry ``Authorization: Bearer <token>``; others get HTTP 401
before reaching the MCP layer (compared in constant time).
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aw_lookahead._extras import require

__all__ = ["BearerAuth", "http_app", "serve_http", "serve_stdio"]

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Any]


class BearerAuth:
    """ASGI middleware: reject HTTP requests without the right bearer token (401)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            got = headers.get(b"authorization", b"")
            if not hmac.compare_digest(got, self._expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _lowlevel(server: Any) -> Any:
    inner = getattr(server, "_lowlevel_server", None)
    return inner if inner is not None else server


def http_app(
    server: Any, *, host: str = "127.0.0.1", auth_token: str | None = None, path: str = "/mcp"
) -> Any:
    """The ASGI app serving ``server`` at ``path`` (bearer-checked when ``auth_token``)."""
    app = _lowlevel(server).streamable_http_app(streamable_http_path=path, host=host)
    return BearerAuth(app, auth_token) if auth_token else app


async def serve_stdio(server: Any) -> None:
    """Serve over this process's stdin/stdout until the client closes them."""
    require("mcp", "mcp")
    from mcp.server.stdio import stdio_server

    low = _lowlevel(server)
    async with stdio_server() as (read, write):
        await low.run(read, write, low.create_initialization_options())


async def serve_http(
    server: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    auth_token: str | None = None,
    path: str = "/mcp",
    log_level: str = "warning",
    on_ready: Callable[[int], None] | None = None,
) -> None:
    """Serve over streamable HTTP at ``http://host:port/mcp`` until cancelled.

    ``on_ready(port)`` is called once the socket listens (useful with port 0).
    """
    uvicorn = require("mcp", "uvicorn")
    config = uvicorn.Config(
        http_app(server, host=host, auth_token=auth_token, path=path),
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )
    srv = uvicorn.Server(config)
    import anyio

    done = anyio.Event()

    async def serve() -> None:
        # Shielded: on cancellation we ask uvicorn to stop instead, so it closes its sockets.
        with anyio.CancelScope(shield=True):
            try:
                await srv.serve()
            finally:
                done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        try:
            while not srv.started and not done.is_set():  # noqa: ASYNC110 - uvicorn has no event
                await anyio.sleep(0.05)
            if on_ready is not None and srv.started:
                bound = port
                for s in getattr(srv, "servers", []):
                    for sock in s.sockets:
                        bound = int(sock.getsockname()[1])
                on_ready(bound)
            await done.wait()
        finally:
            srv.should_exit = True
            with anyio.CancelScope(shield=True):
                await done.wait()
