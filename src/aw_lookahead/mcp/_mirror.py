"""What the proxy shows its clients of the downstream server, and what it passes back.

* :func:`mirroring_server` - a low-level ``Server`` whose ``tools.listChanged``
  is the downstream's (read at each client's initialize).
* :func:`with_confirm_arg` - preview mode's optional ``_aw_confirm`` property
  in a mirrored input schema, so schema-strict clients can send the token.
* :class:`ClientMirror` - the clients' roots become the downstream's roots,
  and the downstream's ``tools/list_changed`` reaches every connected client.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server import Server, ServerRequestContext
    from mcp.server.connection import Connection
    from mcp.types import (
        CallToolRequestParams,
        CallToolResult,
        ListToolsResult,
        NotificationParams,
        PaginatedRequestParams,
        Root,
        Tool,
    )

    from .downstream import Downstream

__all__ = ["ClientMirror", "mirroring_server", "with_confirm_arg"]


def with_confirm_arg(tool: Tool, name: str) -> Tool:
    """``tool`` with ``name`` (``_aw_confirm``) as an optional string property (preview mode)."""
    schema = dict(tool.input_schema or {"type": "object"})
    props = dict(schema.get("properties") or {})
    props[name] = {
        "type": "string",
        "description": "aw-lookahead preview: the confirmation token from the preview result; "
        "send it with the same arguments to execute the call (removed before forwarding).",
    }
    schema["properties"] = props
    return tool.model_copy(update={"input_schema": schema})


def mirroring_server(
    downstream: Downstream,
    name: str,
    *,
    version: str,
    instructions: str,
    on_list_tools: Callable[
        [ServerRequestContext, PaginatedRequestParams | None], Awaitable[ListToolsResult]
    ],
    on_call_tool: Callable[
        [ServerRequestContext, CallToolRequestParams], Awaitable[CallToolResult]
    ],
    on_roots_list_changed: Callable[
        [ServerRequestContext, NotificationParams | None], Awaitable[None]
    ],
) -> Server:
    """A low-level ``Server`` whose ``tools.listChanged`` is ``downstream``'s."""
    from mcp.server import Server
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.types import ServerCapabilities

    class MirroringServer(Server):
        def get_capabilities(
            self,
            notification_options: NotificationOptions | None = None,
            experimental_capabilities: dict[str, dict[str, Any]] | None = None,
            extensions: dict[str, dict[str, Any]] | None = None,
            *,
            protocol_version: str | None = None,
        ) -> ServerCapabilities:
            opts = notification_options or NotificationOptions()
            opts = NotificationOptions(
                prompts_changed=opts.prompts_changed,
                resources_changed=opts.resources_changed,
                tools_changed=downstream.tools_list_changed,
            )
            return super().get_capabilities(
                opts, experimental_capabilities, extensions, protocol_version=protocol_version
            )

    with warnings.catch_warnings():  # roots are deprecated in 2026-07-28, still used by IDEs
        warnings.simplefilter("ignore")
        return MirroringServer(
            name,
            version=version,
            instructions=instructions,
            on_list_tools=on_list_tools,
            on_call_tool=on_call_tool,
            on_roots_list_changed=on_roots_list_changed,
        )


def _connection(ctx: ServerRequestContext) -> Connection | None:
    """The client connection behind a request (``None`` for a stateless request)."""
    conn: Connection | None = getattr(ctx.session, "_connection", None)
    return conn


class ClientMirror:
    """The clients' side of the mirroring: their connections and their roots.

    The roots are read when a client first calls and re-read on its
    ``notifications/roots/list_changed``; a client without roots leaves the
    downstream on its own configuration. A change of roots is passed to the
    downstream (:meth:`Downstream.roots_changed`), and the downstream's
    ``tools/list_changed`` is sent to every handshake-era client connection.
    """

    def __init__(self, downstream: Downstream) -> None:
        self.downstream = downstream
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._roots_read: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._roots: list[Root] | None = None
        downstream.roots = self.roots
        downstream.on_tools_changed = self.tools_changed

    async def client_seen(self, ctx: ServerRequestContext) -> None:
        """Remember the client's connection; read its roots once (again after a change)."""
        conn = _connection(ctx)
        if conn is None:
            return
        try:
            self._connections.add(conn)
            if conn in self._roots_read:
                return
            self._roots_read.add(conn)
        except TypeError:
            return
        from mcp import types
        from mcp.shared.message import ServerMessageMetadata

        wants = types.ClientCapabilities(roots=types.RootsCapability())
        if not ctx.session.check_client_capability(wants):
            return
        try:
            result = await ctx.session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
            )
        except Exception:  # a client that declares roots but cannot list them: keep as is
            return
        await self._set_roots(list(result.roots))

    async def on_roots_list_changed(
        self, ctx: ServerRequestContext, params: NotificationParams | None
    ) -> None:
        conn = _connection(ctx)
        if conn is None:
            return
        self._roots_read.discard(conn)
        try:  # read them now over the connection's own channel; else at the next request
            raw = await conn.outbound.send_raw_request("roots/list", None, None)
            from mcp import types

            roots = types.ListRootsResult.model_validate(raw).roots
        except Exception:
            return
        self._roots_read.add(conn)
        await self._set_roots(list(roots))

    async def _set_roots(self, roots: list[Root]) -> None:
        if self._roots is not None and [r.uri for r in roots] == [r.uri for r in self._roots]:
            return
        self._roots = roots
        await self.downstream.roots_changed()

    async def roots(self) -> list[Root] | None:
        """The clients' roots for the downstream (``None``: no client has sent any)."""
        return self._roots

    async def tools_changed(self) -> None:
        """Tell every handshake-era client connection that the tool list changed."""
        for conn in list(self._connections):
            if str(getattr(conn, "protocol_version", "")) >= "2026-07-28":
                continue  # stateless clients learn of changes through subscriptions, not here
            try:
                await conn.outbound.notify("notifications/tools/list_changed", None)
            except Exception:  # a closed connection
                self._connections.discard(conn)
