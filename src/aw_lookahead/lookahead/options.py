"""The keyword options of :class:`~aw_lookahead.lookahead.Lookahead`, as one typed dict.

The adapters (LangGraph middleware, node and shadow middleware) build their
engine from the options they are given; typing those ``**engine_options``
with :class:`EngineOptions` lets a type checker catch a misspelt or mistyped
option where the adapter is constructed, as it would for ``Lookahead(...)``.
The engine's signature stays the one source of defaults and checks.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypedDict

if TYPE_CHECKING:
    from .cache import PredictionCache
    from .calibration import Calibration
    from .engine import SimulatePolicy
    from .judges import Judge
    from .routing import RiskRouter
    from .safety import ErrorPolicy
    from .types import Outcome

__all__ = ["EngineOptions"]


class EngineOptions(TypedDict, total=False):
    """Every keyword of ``Lookahead(world_model, ...)``; see its docstring for each one."""

    judges: Iterable[Judge] | None
    router: RiskRouter | None
    simulate: SimulatePolicy
    on_error: ErrorPolicy
    deadline_s: float | None
    cache: PredictionCache | Literal[False] | None
    veto_outcomes: Iterable[Outcome]
    threshold: float | None
    false_veto_budget: float | None
    calibration: Calibration | str | os.PathLike[str] | Literal[False] | None
