"""``aw-lookahead proxy``: an MCP server in front of a real one, simulating calls first.

The proxy lists the downstream tools (annotations and schemas unchanged) and
handles each ``tools/call`` by mode:

* ``gate`` - route by annotations (a tool annotated ``readOnlyHint``, and not
  ``destructiveHint: true`` too, passes straight through unless
  ``simulate="always"``; other tools are judged by everything they say, see
  :mod:`aw_lookahead.lookahead.tool_effects`), simulate with this session's
  history, then veto predicted failures / no-ops / risky outcomes with an
  ``isError`` result explaining the prediction (the real call is never made),
  or forward.
* ``preview`` - predict, then execute only after confirmation (a tool
  annotated read-only, and not destructive, runs at once): MCP
  elicitation when the client supports it, otherwise a single-use
  confirmation token the caller passes back as argument ``_aw_confirm``.
  A token is bound to the session that got it and to the canonical JSON of
  the arguments (sorted keys, types kept: ``1``, ``1.0`` and ``true``
  differ); at most ``max_pending_tokens`` wait per session (the oldest is
  dropped).
* ``dryrun`` - never execute; return the simulated result (with
  schema-valid ``structured_content`` for tools with an output schema), with
  optional deterministic faults from :class:`Perturbation`.
* ``shadow`` - forward, and log (predicted, real) pairs with their divergence.
  Every pair whose real call completed is written, also when the client
  leaves right after: on shutdown the proxy waits up to ``shadow_flush_s``
  for pending predictions and writes the rest with ``predicted: null`` and
  the reason (:meth:`LookaheadProxy.flush_shadow`).

Sessions: each client connection has its own history, never shared. A
stateless (2026-07-28) HTTP request has no connection, so it gets no
history; its preview tokens are bound to its ``Authorization`` header and,
where clients share one credential, to the key each sends in the
``X-AW-Client-Key`` header (:data:`CLIENT_KEY_HEADER`).
Stateless requests over stdio share the one history of that process.

Guarantees: a call is forwarded at most once (:class:`Downstream`); a
downstream crash or hang becomes an ``isError`` result for that call only;
a call lookahead could not check follows ``on_error`` (:mod:`aw_lookahead.lookahead.safety`;
default ``fail_safe``: blocked when the tool may be destructive, else forwarded with a
note in the result saying it ran unchecked - ``note_unchecked=False`` drops the note).

Mirroring: ``tools.listChanged`` is the downstream's, and its
``notifications/tools/list_changed`` reach every connected client; the
client's roots are the downstream's roots (read when a client first calls,
re-read on its ``notifications/roots/list_changed``; a client without roots
leaves the downstream on its own configuration); preview mode adds
``_aw_confirm`` as an optional property to every input schema.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import weakref
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVarTuple

import anyio

from aw_lookahead._extras import require
from aw_lookahead.errors import DownstreamError, UsageError
from aw_lookahead.trajectory import Trajectory, Turn, canonical_arguments
from aw_lookahead.worldmodel.base import WorldModel

from ._mirror import ClientMirror, mirroring_server, with_confirm_arg
from ._modes import ModeHandlers
from ._progress_notify import reporter, with_progress
from ._proxy_state import (
    CLIENT_KEY_HEADER,
    CONFIRM_ARG,
    Arguments,
    ModeContext,
    ProxyConfig,
    ProxyMode,
    SessionState,
    error_result,
)
from .downstream import Downstream
from .results import result_text

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine

    from anyio.abc import TaskGroup
    from mcp.server import ServerRequestContext
    from mcp.server.connection import Connection
    from mcp.types import (
        CallToolRequestParams,
        CallToolResult,
        ListToolsResult,
        PaginatedRequestParams,
        Tool,
    )

__all__ = [
    "CLIENT_KEY_HEADER",
    "CONFIRM_ARG",
    "LookaheadProxy",
    "ProxyConfig",
    "ProxyMode",
    "SessionState",
]

_Ts = TypeVarTuple("_Ts")


@dataclass
class _Pending:
    owner: str
    name: str
    arguments: str
    expires: float


class LookaheadProxy:
    """The proxy: build with a :class:`Downstream` and a world model, serve ``.server``.

    Use as an async context manager (it starts the downstream), then serve
    :attr:`server` with :func:`~aw_lookahead.mcp.transport.serve_stdio` or
    :func:`~aw_lookahead.mcp.transport.serve_http`, or connect ``Client(proxy.server)``.
    """

    def __init__(
        self,
        downstream: Downstream,
        world_model: WorldModel,
        config: ProxyConfig | None = None,
        *,
        name: str = "aw-lookahead-proxy",
    ) -> None:
        require("mcp", "mcp")
        from aw_lookahead._version import __version__
        from aw_lookahead.lookahead import Lookahead, RuleJudge

        from .environment import DownstreamEnvironment

        self.downstream = downstream
        self._mirror = ClientMirror(downstream)
        self.world_model = world_model
        self.config = config or ProxyConfig()
        policy = "always" if self.config.mode is not ProxyMode.GATE else self.config.simulate
        self.engine = Lookahead(
            world_model,
            simulate=policy,
            judges=[RuleJudge()],
            on_error=self.config.on_error,
            deadline_s=self.config.deadline_s,
            environment=DownstreamEnvironment(downstream)  # gate: look first; else predict
            if self.config.observe and self.config.mode is ProxyMode.GATE
            else None,
        )
        self._sessions = _SessionMap()
        self._ordinals = 0
        self._pending: dict[str, _Pending] = {}
        self.stats: dict[str, int] = {"calls": 0, "vetoed": 0, "forwarded": 0, "simulated": 0}
        self._modes = ModeHandlers(
            ModeContext(
                config=self.config,
                engine=self.engine,
                stats=self.stats,
                trajectory=self.trajectory,
                forward=self.forward,
                issue_token=self.issue_token,
                spawn=self.spawn,
            )
        )
        self._tg: TaskGroup | None = None
        self._stack: AsyncExitStack | None = None
        self.server = mirroring_server(
            downstream,
            name,
            version=__version__,
            instructions=f"aw-lookahead proxy ({self.config.mode.value} mode) in front of "
            f"{downstream.label}",
            on_list_tools=self._on_list_tools,
            on_call_tool=self._on_call_tool,
            on_roots_list_changed=self._mirror.on_roots_list_changed,
        )

    async def __aenter__(self) -> LookaheadProxy:
        """Start the downstream and wait for it; a failed start raises one DownstreamError.

        Whatever was opened before a failure (or a cancellation) is closed
        again before the error leaves: no downstream process is left behind.
        """
        async with AsyncExitStack() as stack:
            stack.callback(self._modes.close)
            await stack.enter_async_context(self.downstream)
            await self.downstream.started()
            self._tg = await stack.enter_async_context(anyio.create_task_group())
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *exc: object) -> None:
        with anyio.CancelScope(shield=True):
            await self.flush_shadow(self.config.shadow_flush_s, "the proxy stopped first")
        if self._tg is not None:
            self._tg.cancel_scope.cancel()
        if self._stack is not None:
            await self._stack.aclose()  # the task group, the downstream, the shadow log
        self._tg = self._stack = None

    async def flush_shadow(self, wait_s: float, why: str) -> None:
        """Write every completed shadow pair, waiting up to ``wait_s`` for its prediction."""
        await self._modes.flush_shadow(wait_s, why)

    # ------------------------------------------------------------------ MCP handlers

    async def _on_list_tools(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        from mcp.types import ListToolsResult

        await self._mirror.client_seen(ctx)
        tools = await self.downstream.tools()
        if self.config.mode is ProxyMode.PREVIEW:
            tools = [with_confirm_arg(t, CONFIRM_ARG) for t in tools]
        return ListToolsResult(tools=tools)

    async def _on_call_tool(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        self.stats["calls"] += 1
        arguments = dict(params.arguments or {})
        session = self.session_state(ctx)
        try:
            await self._mirror.client_seen(ctx)
            return await with_progress(
                reporter(ctx),
                lambda: self._dispatch(ctx, session, params.name, arguments),
                what=f"{self.config.mode.value} {params.name}",
            )
        except DownstreamError as exc:
            return error_result(f"[aw-lookahead proxy] {exc}")
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:  # the low-level server would turn it into a JSON-RPC error
            return error_result(f"[aw-lookahead proxy] internal error: {type(exc).__name__}: {exc}")

    async def _dispatch(
        self, ctx: ServerRequestContext, session: SessionState, name: str, arguments: Arguments
    ) -> CallToolResult:
        mode = self.config.mode
        token = arguments.pop(CONFIRM_ARG, None)
        if mode is ProxyMode.PREVIEW and token is not None:
            return await self._confirmed(session, name, arguments, str(token))
        tool = await self.find_tool(name)
        if tool is None:
            names = ", ".join(sorted(t.name for t in await self.downstream.tools()))
            return error_result(f"unknown tool {name!r}; the server offers: {names}")
        if mode is ProxyMode.GATE:
            return await self._modes.gate(session, tool, arguments)
        if mode is ProxyMode.PREVIEW:
            hints = tool.annotations
            if hints is not None and hints.read_only_hint and hints.destructive_hint is not True:
                return await self.forward(session, name, arguments)  # nothing to confirm
            return await self._modes.preview(ctx, session, tool, arguments)
        if mode is ProxyMode.DRYRUN:
            return await self._modes.dryrun(session, tool, arguments)
        return await self._modes.shadow(session, tool, arguments)

    # ------------------------------------------------------------------ helpers for modes

    def session_state(self, ctx: ServerRequestContext) -> SessionState:
        """The state of the client connection behind ``ctx``; never shared between clients.

        Handshake-era connections (stdio, streamable HTTP with a session id)
        keep one state each. The stateless 2026-07-28 protocol has no
        connection to key on: over stdio (one client per proxy process) its
        requests share one state; over HTTP each request gets a fresh state
        (no history), whose preview tokens belong to the request's
        ``Authorization`` header and ``X-AW-Client-Key``.
        """
        key: Connection | str | None = getattr(ctx.session, "_connection", None)
        if key is None or str(getattr(ctx, "protocol_version", "")) >= "2026-07-28":
            request = getattr(ctx, "request", None)
            if request is not None:
                return self._new_state(_stateless_owner(request))
            key = "stateless"
        state = self._sessions.get(key)
        if state is None:
            state = self._new_state(None)
            self._sessions[key] = state
        return state

    def _new_state(self, owner: str | None) -> SessionState:
        ordinal = self._ordinals
        self._ordinals += 1
        return SessionState(ordinal=ordinal, owner=owner or f"session:{ordinal}")

    async def find_tool(self, name: str) -> Tool | None:
        for tool in await self.downstream.tools():
            if tool.name == name:
                return tool
        return None

    async def trajectory(self, session: SessionState) -> Trajectory:
        tools = [
            t.model_dump(mode="json", by_alias=True, exclude_none=True)
            for t in await self.downstream.tools()
        ]
        turns = session.turns[-self.config.max_history :] if self.config.max_history else []
        return Trajectory(domain="mcp", tools=tools, turns=list(turns))

    def remember(
        self, session: SessionState, action: dict[str, object], result: CallToolResult
    ) -> None:
        session.turns.append(Turn(action=action, observation=result_text(result)))

    async def forward(
        self, session: SessionState, name: str, arguments: Arguments
    ) -> CallToolResult:
        result = await self.downstream.call(name, arguments)
        self.stats["forwarded"] += 1
        self.remember(session, {"name": name, "arguments": arguments}, result)
        return result

    def issue_token(self, session: SessionState, name: str, arguments: Arguments) -> str:
        """A single-use token for this call, redeemable only by ``session.owner``."""
        now = time.monotonic()
        for key in [k for k, p in self._pending.items() if p.expires < now]:
            del self._pending[key]
        mine = [k for k, p in self._pending.items() if p.owner == session.owner]
        for key in mine[: max(0, len(mine) - self.config.max_pending_tokens + 1)]:
            del self._pending[key]  # oldest first (dicts keep insertion order)
        token = secrets.token_urlsafe(16)
        expires = now + self.config.confirm_ttl_s
        canonical = canonical_arguments(arguments)
        self._pending[token] = _Pending(session.owner, name, canonical, expires)
        return token

    async def _confirmed(
        self, session: SessionState, name: str, arguments: Arguments, token: str
    ) -> CallToolResult:
        pending = self._pending.pop(token, None)  # single use: popped before forwarding
        if pending is None or pending.expires < time.monotonic():
            return error_result(
                f"confirmation token {token!r} is unknown, used or expired; call {name!r} "
                "without it to get a new preview"
            )
        if not secrets.compare_digest(pending.owner, session.owner):
            self._pending[token] = pending  # still its owner's to redeem
            return error_result(
                "the confirmation token was issued to another session; nothing was executed. "
                f"Call {name!r} without it to get a preview of your own."
            )
        if (pending.name, pending.arguments) != (name, canonical_arguments(arguments)):
            self._pending[token] = pending  # a wrong retry does not use the token up
            return error_result(
                f"the confirmation token no longer matches: it was issued for {pending.name!r} "
                "with the previewed arguments, and this call's tool or arguments differ; "
                "nothing was executed. The token still confirms the previewed call exactly as "
                f"it was; for this one, call {name!r} without it to get a new preview."
            )
        return await self.forward(session, name, arguments)

    def spawn(self, fn: Callable[[*_Ts], Coroutine[object, object, None]], *args: *_Ts) -> None:
        """Run a background task (shadow logging) owned by the proxy."""
        if self._tg is None:
            raise UsageError("the proxy is not running; use it as `async with proxy:` first")
        self._tg.start_soon(fn, *args)


class _SessionMap(dict[object, SessionState]):
    """Connection -> state; entries of closed connections are dropped (weak keys)."""

    def __init__(self) -> None:
        super().__init__()
        self._weak: weakref.WeakKeyDictionary[object, SessionState] = weakref.WeakKeyDictionary()

    def get(self, key: object, default: SessionState | None = None) -> SessionState | None:  # type: ignore[override]
        try:
            return self._weak.get(key, default)
        except TypeError:
            return super().get(key, default)

    def __setitem__(self, key: object, value: SessionState) -> None:
        try:
            self._weak[key] = value
        except TypeError:
            super().__setitem__(key, value)


def _stateless_owner(request: object) -> str:
    """Who a stateless HTTP request is: its Authorization header and client key (digested).

    Clients that share one credential tell themselves apart with
    :data:`CLIENT_KEY_HEADER`; without either header the caller is anonymous.
    """
    headers = getattr(request, "headers", None)
    auth = headers.get("authorization", "") if headers is not None else ""
    key = headers.get(CLIENT_KEY_HEADER, "") if headers is not None else ""
    if not auth and not key:
        return "stateless:anonymous"
    digest = hashlib.sha256(f"{auth}\0{key}".encode()).hexdigest()[:32]
    return f"stateless:{digest}"
