"""The keyword options of :class:`~aw_lookahead.lookahead.Lookahead`, as one typed dict.

The adapters (LangGraph middleware, node and shadow middleware) build their
engine from the options they are given; typing those ``**engine_options``
with :class:`EngineOptions` lets a type checker catch a misspelt or mistyped
option where the adapter is constructed, as it would for ``Lookahead(...)``.
The engine's signature stays the one source of defaults; :func:`check_options` holds the
checks it runs on them (kept here, beside the literals it checks against).

The option types that are plain literals live here too, so an adapter that
narrows one (the MCP proxy takes only the policies that check something)
names the engine's type instead of spelling its values again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypedDict

from aw_lookahead.errors import ConfigError

from .safety import ERROR_POLICIES

if TYPE_CHECKING:
    from .cache import PredictionCache
    from .calibration import Calibration
    from .environment import EnvironmentLike
    from .judges import Judge
    from .routing import RiskRouter
    from .safety import ErrorPolicy
    from .types import Outcome

__all__ = [
    "CheckingPolicy",
    "EngineOptions",
    "EngineOptionsBase",
    "SimulatePolicy",
    "check_options",
]

CheckingPolicy = Literal["always", "risky"]
"""The ``simulate`` policies under which actions are checked (``never`` checks none)."""

SimulatePolicy = Literal[CheckingPolicy, "never"]
"""When the engine simulates an action: ``always``, ``risky`` (as routed), or ``never``."""


class EngineOptionsBase(TypedDict, total=False):
    """Every keyword of ``Lookahead(world_model, ...)`` but ``deadline_s``.

    For an adapter whose own ``deadline_s`` means something else (the shadow
    middleware's is how long a finished call waits for its simulation).
    """

    judges: Iterable[Judge] | None
    router: RiskRouter | None
    simulate: SimulatePolicy
    on_error: ErrorPolicy
    cache: PredictionCache | Literal[False] | None
    veto_outcomes: Iterable[Outcome]
    threshold: float | None
    false_veto_budget: float | None
    calibration: Calibration | str | os.PathLike[str] | Literal[False] | None
    environment: EnvironmentLike | None


class EngineOptions(EngineOptionsBase, total=False):
    """Every keyword of ``Lookahead(world_model, ...)``; see its docstring for each one."""

    deadline_s: float | None


def check_options(
    *,
    simulate: object,
    on_error: object,
    threshold: float | None,
    false_veto_budget: float | None,
) -> None:
    """Raise :class:`~aw_lookahead.errors.ConfigError`, naming the valid values, for the first
    of the engine's options that is out of range (``threshold``, ``false_veto_budget``,
    ``simulate``, ``on_error``, in that order)."""
    if threshold is not None and not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold must be in (0, 1], got {threshold!r}")
    if false_veto_budget is not None and not 0.0 <= false_veto_budget <= 1.0:
        raise ConfigError(f"false_veto_budget must be in [0, 1], got {false_veto_budget!r}")
    if simulate not in ("always", "risky", "never"):
        raise ConfigError(f"simulate={simulate!r} is not valid; use 'always', 'risky' or 'never'")
    if on_error not in ERROR_POLICIES:
        raise ConfigError(
            f"on_error={on_error!r} is not valid; use 'fail_safe', 'fail_open' or 'fail_closed'"
        )
