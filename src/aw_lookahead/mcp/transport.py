"""Serve an MCP server (``MCPServer`` or low-level ``Server``) over stdio or streamable HTTP.

HTTP binds to 127.0.0.1 unless told otherwise. Guarantees:

* With ``auth_token`` every request must carry ``Authorization: Bearer
  <token>`` (the scheme in any case); others get HTTP 401 before reaching
  the MCP layer (the token is compared in constant time). An empty, blank
  or short token (under 16 characters) is refused with a
  :class:`~aw_lookahead.errors.ConfigError`, never taken as "no auth".
* Binding an address that is not loopback needs a token, or an explicit
  ``allow_unauthenticated=True``; without either it is a ConfigError.
* Host and Origin headers are always checked (DNS-rebinding protection of
  the MCP SDK's ``TransportSecuritySettings``): loopback names are allowed,
  plus the bound address and whatever ``allowed_hosts`` / ``allowed_origins``
  add. A bad Host gets 421, a bad Origin 403. A request without Origin (any
  non-browser client) passes the Origin check.
* Serving HTTP without a token logs a WARNING on the ``aw_lookahead.mcp`` logger.
* A client has 10 s for a request's headers and 30 s for its body (counted
  from their first byte), then it is disconnected: half-sent requests cannot
  hold the server's connections (:mod:`aw_lookahead.mcp._slow_clients`).
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aw_lookahead._extras import require
from aw_lookahead._net import WILDCARD_BINDS, check_server_token, is_loopback
from aw_lookahead.errors import ConfigError

from ._slow_clients import BODY_TIMEOUT_S, HEADER_TIMEOUT_S, timed_http_protocol

if TYPE_CHECKING:
    from mcp.server import MCPServer, Server
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["BearerAuth", "check_http_auth", "http_app", "serve_http", "serve_stdio"]

log = logging.getLogger("aw_lookahead.mcp")

_LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")


def _check_token(token: str) -> bytes:
    check_server_token(token, origin="the HTTP auth token", variable="AW_LOOKAHEAD_AUTH_TOKEN")
    return token.encode()


class BearerAuth:
    """ASGI middleware: reject HTTP requests without the right bearer token (401).

    The scheme is matched case-insensitively (``bearer``, ``Bearer``); the
    token exactly, in constant time. An empty or short token is a ConfigError.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = _check_token(token)

    def _authorized(self, header: bytes) -> bool:
        scheme, _, credentials = header.strip().partition(b" ")
        ok_scheme = scheme.lower() == b"bearer"
        return hmac.compare_digest(credentials.strip(), self._expected) and ok_scheme

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if not self._authorized(headers.get(b"authorization", b"")):
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


def check_http_auth(
    host: str, auth_token: str | None, *, allow_unauthenticated: bool = False
) -> None:
    """Raise ConfigError for an empty or short token, or a non-loopback ``host`` without one."""
    if auth_token is not None:
        _check_token(auth_token)
    elif not is_loopback(host) and not allow_unauthenticated:
        raise ConfigError(
            f"binding {host} makes the server reachable from other machines; set a token "
            "(AW_LOOKAHEAD_AUTH_TOKEN or --auth-token) or pass --allow-unauthenticated"
        )


def _security_settings(
    host: str, allowed_hosts: Sequence[str], allowed_origins: Sequence[str]
) -> TransportSecuritySettings:
    from mcp.server.transport_security import TransportSecuritySettings

    hosts = list(_LOOPBACK_HOSTS)
    if host not in WILDCARD_BINDS and not is_loopback(host):
        hosts.append(f"[{host}]:*" if ":" in host else f"{host}:*")
    hosts += [h for h in allowed_hosts if h not in hosts]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    origins += [o for o in allowed_origins if o not in origins]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _lowlevel(server: Server | MCPServer) -> Server:
    """The low-level ``Server`` that runs the protocol (an ``MCPServer`` wraps one)."""
    from mcp.server import MCPServer

    return server._lowlevel_server if isinstance(server, MCPServer) else server


def http_app(
    server: Server | MCPServer,
    *,
    host: str = "127.0.0.1",
    auth_token: str | None = None,
    path: str = "/mcp",
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_unauthenticated: bool = False,
) -> ASGIApp:
    """The ASGI app serving ``server`` at ``path``; see the module docstring for the checks.

    ``allowed_hosts`` are Host header values (``name:port``, ``name:*`` for any
    port); ``allowed_origins`` are Origin values (``https://app.example``).
    """
    check_http_auth(host, auth_token, allow_unauthenticated=allow_unauthenticated)
    if auth_token is None:
        log.warning(
            "serving MCP over HTTP on %s without a bearer token: anything that can reach the "
            "port can call the tools; set AW_LOOKAHEAD_AUTH_TOKEN",
            host,
        )
    security = _security_settings(host, allowed_hosts, allowed_origins)
    app = _lowlevel(server).streamable_http_app(
        streamable_http_path=path, host=host, transport_security=security
    )
    return BearerAuth(app, auth_token) if auth_token is not None else app


async def serve_stdio(server: Server | MCPServer) -> None:
    """Serve over this process's stdin/stdout until the client closes them."""
    require("mcp", "mcp")
    from mcp.server.stdio import stdio_server

    low = _lowlevel(server)
    async with stdio_server() as (read, write):
        await low.run(read, write, low.create_initialization_options())


async def serve_http(
    server: Server | MCPServer,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    auth_token: str | None = None,
    path: str = "/mcp",
    log_level: str = "warning",
    on_ready: Callable[[int], None] | None = None,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    allow_unauthenticated: bool = False,
    header_timeout_s: float = HEADER_TIMEOUT_S,
    body_timeout_s: float = BODY_TIMEOUT_S,
) -> None:
    """Serve over streamable HTTP at ``http://host:port/mcp`` until cancelled.

    ``on_ready(port)`` is called once the socket listens (useful with port 0).
    The security keywords are those of :func:`http_app`. A client gets
    ``header_timeout_s`` for a request's headers and ``body_timeout_s`` for its
    body, counted from their first byte; then it is disconnected (see
    :mod:`aw_lookahead.mcp._slow_clients`), so slow clients cannot hold the
    server's connections.
    """
    uvicorn = require("mcp", "uvicorn")
    app = http_app(
        server,
        host=host,
        auth_token=auth_token,
        path=path,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
        allow_unauthenticated=allow_unauthenticated,
    )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=5,
        http=timed_http_protocol(header_timeout_s, body_timeout_s),
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
