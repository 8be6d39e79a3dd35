"""The proxy's settings, its per-client state and what its mode handlers may use.

This module sits below both :mod:`.proxy` and :mod:`._modes`: the proxy builds
one :class:`ModeContext` and hands it to the mode handlers, so they see the
settings and the services they need, never the proxy itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVarTuple

from aw_lookahead.lookahead.options import CheckingPolicy
from aw_lookahead.lookahead.safety import ErrorPolicy
from aw_lookahead.trajectory import Trajectory, Turn

from .perturb import Perturbation

if TYPE_CHECKING:
    from mcp.types import CallToolResult

    from aw_lookahead.lookahead import Lookahead

__all__ = [
    "CLIENT_KEY_HEADER",
    "CONFIRM_ARG",
    "Arguments",
    "ModeContext",
    "ProxyConfig",
    "ProxyMode",
    "SessionState",
    "Spawn",
    "error_result",
]

CONFIRM_ARG = "_aw_confirm"
CLIENT_KEY_HEADER = "x-aw-client-key"
"""Stateless HTTP clients that share one credential send a key of their own in this header:
preview tokens are bound to the credential and the key together."""

Arguments: TypeAlias = dict[str, Any]
"""A tool call's JSON arguments, as MCP's ``CallToolRequestParams.arguments`` carries them."""


class ProxyMode(StrEnum):
    GATE = "gate"
    PREVIEW = "preview"
    DRYRUN = "dryrun"
    SHADOW = "shadow"


@dataclass
class ProxyConfig:
    """How the proxy decides; see :mod:`aw_lookahead.mcp.proxy` for the modes."""

    mode: ProxyMode = ProxyMode.GATE
    simulate: CheckingPolicy = "risky"
    on_error: ErrorPolicy = "fail_safe"
    deadline_s: float | None = None  # None: from the world model's timeout
    note_unchecked: bool = True
    perturb: Perturbation | None = None
    shadow_log: Path | None = None
    shadow_flush_s: float = 10.0
    confirm_ttl_s: float = 600.0
    max_pending_tokens: int = 16
    max_history: int = 50
    elicit: bool = True
    observe: bool = True
    """Gate mode: look at the downstream's state through its read-only tools first."""


@dataclass
class SessionState:
    """One client session: its real (or, in dryrun, simulated) history."""

    ordinal: int
    turns: list[Turn] = field(default_factory=list)
    calls: int = 0
    owner: str = ""
    """Who may redeem this session's preview tokens (a session, or a stateless caller)."""


_Ts = TypeVarTuple("_Ts")


class Spawn(Protocol):
    """Start ``fn(*args)`` as a background task owned by the proxy."""

    def __call__(
        self, fn: Callable[[*_Ts], Coroutine[object, object, None]], *args: *_Ts
    ) -> None: ...


@dataclass(frozen=True)
class ModeContext:
    """Everything a mode handler may use of the proxy, built by the proxy.

    ``stats`` is the proxy's own counter dict (handlers add to it).
    ``forward`` sends the call downstream once and records it in the
    session's history; ``spawn`` runs a background task that the proxy
    cancels when it stops.
    """

    config: ProxyConfig
    engine: Lookahead
    stats: dict[str, int]
    trajectory: Callable[[SessionState], Awaitable[Trajectory]]
    forward: Callable[[SessionState, str, Arguments], Awaitable[CallToolResult]]
    issue_token: Callable[[SessionState, str, Arguments], str]
    spawn: Spawn


def error_result(text: str, meta: Mapping[str, object] | None = None) -> CallToolResult:
    """An ``isError`` tool result (skips the client's output-schema check)."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(
        content=[TextContent(text=text)], is_error=True, _meta=None if meta is None else dict(meta)
    )
