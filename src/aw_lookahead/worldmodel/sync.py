"""Thin synchronous wrapper over any :class:`~aw_lookahead.worldmodel.WorldModel`."""

from __future__ import annotations

from collections.abc import Sequence

from aw_lookahead._sync import run_sync
from aw_lookahead.trajectory import Action, Trajectory

from .base import Prediction, WorldModel

__all__ = ["SyncWorldModel"]


class SyncWorldModel:
    """Blocking ``predict`` / ``predict_many`` for scripts and sync frameworks.

    Calls run on one shared background event loop, so it also works from code
    that already runs inside an event loop.
    """

    def __init__(self, world_model: WorldModel) -> None:
        self.world_model = world_model

    def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        return run_sync(self.world_model.predict(trajectory, action))

    def predict_many(self, trajectory: Trajectory, actions: Sequence[Action]) -> list[Prediction]:
        return run_sync(self.world_model.predict_many(trajectory, actions))

    def close(self) -> None:
        """Close the wrapped model's connections (on the loop that opened them)."""
        aclose = getattr(self.world_model, "aclose", None)
        if aclose is not None:
            run_sync(aclose())

    def __enter__(self) -> SyncWorldModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
