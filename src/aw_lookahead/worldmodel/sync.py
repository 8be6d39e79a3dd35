"""Deprecated, kept for one release: the ``SyncWorldModel`` wrapper class.

``SyncWorldModel(wm).predict(...)`` is now ``wm.predict_sync(...)`` (and
``predict_many_sync``, ``close``) on :class:`~aw_lookahead.worldmodel.BaseWorldModel`,
on the same shared background loop. The old name resolves with a
:class:`DeprecationWarning`; it still wraps any
:class:`~aw_lookahead.worldmodel.WorldModel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aw_lookahead._deprecated import renamed_attribute
from aw_lookahead._sync import run_sync
from aw_lookahead.trajectory import Action, Trajectory

from .base import Prediction, WorldModel


class _SyncWorldModel:
    """Deprecated ``SyncWorldModel``: blocking ``predict`` / ``predict_many`` over any world
    model, on the shared background loop. Use the model's ``predict_sync`` instead."""

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

    def __enter__(self) -> _SyncWorldModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def __getattr__(name: str) -> Any:
    return renamed_attribute(__name__, name)
