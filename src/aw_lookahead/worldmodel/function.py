"""A world model backed by a Python function: rule-based simulators, replays, benchmarks.

Useful where a deterministic answer is wanted (a known environment model, a
recorded replay) and as the instant world model of the engine benchmarks.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable

from aw_lookahead.trajectory import Action, Trajectory

from .base import BaseWorldModel, Prediction

PredictFn = Callable[[Trajectory, Action], str | Awaitable[str]]

__all__ = ["FunctionWorldModel"]


class FunctionWorldModel(BaseWorldModel):
    """Calls ``fn(trajectory, action)`` (sync or async) for the observation text."""

    def __init__(self, fn: PredictFn, *, model_id: str = "function") -> None:
        self._fn = fn
        self._model_id = model_id
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        started = time.perf_counter()
        self.calls += 1
        out = self._fn(trajectory, action)
        text = await out if inspect.isawaitable(out) else out
        return Prediction(
            action=action,
            observation=text,
            raw=text,
            model=self._model_id,
            latency_s=time.perf_counter() - started,
            finish_reason="stop",
            parse_method="function",
        )
