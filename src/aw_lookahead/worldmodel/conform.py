"""The one place a world model is checked against the contract and given its defaults.

:func:`conform` is called once, where a world model enters the engine (or the
evaluation runner): a :class:`~.base.BaseWorldModel` comes back as it is; an
object written against the bare :class:`~.base.WorldModel` protocol is checked
(a :class:`~aw_lookahead.errors.ConfigError` names what it lacks) and wrapped
in :class:`ProtocolWorldModel`, which gives it the contract's defaults. So
code outside this package calls members and never probes for them.
"""

from __future__ import annotations

from typing import cast

from aw_lookahead.errors import ConfigError, WorldModelError
from aw_lookahead.prompts.render import PromptSet
from aw_lookahead.trajectory import Action, Trajectory

from .base import BaseWorldModel, Prediction, Step, WorldModel

__all__ = ["ProtocolWorldModel", "conform"]

_REQUIRED: dict[str, str] = {
    "model_id": "a str naming the model and its settings (the prediction cache keys on it)",
    "predict": "async predict(trajectory, action) -> Prediction",
    "predict_many": (
        "async predict_many(trajectory, actions, *, return_exceptions=False) -> list[Prediction]"
    ),
}


def conform(world_model: object) -> BaseWorldModel:
    """``world_model`` with the whole contract: itself when it is a ``BaseWorldModel``,
    else checked and wrapped in :class:`ProtocolWorldModel`.

    Raises :class:`~aw_lookahead.errors.ConfigError` naming what it lacks: the
    required members of :class:`~.base.WorldModel` (``model_id`` a ``str``;
    ``predict``/``predict_many`` callables) and ``prompts`` when it has one
    that is not a ``PromptSet``. Whether the methods are async is not checked
    (a wrapper may return an awaitable): a sync one fails at the first step,
    and the engine's ``on_error`` takes it like any broken backend.
    """
    if isinstance(world_model, BaseWorldModel):
        return world_model
    problems: list[str] = []
    for name, what in _REQUIRED.items():
        try:
            value = getattr(world_model, name)
        except AttributeError:
            problems.append(f"{name} is missing ({what})")
            continue
        except Exception as exc:  # a property that raises: report it, do not crash here
            problems.append(f"{name} raised {type(exc).__name__}: {exc} ({what})")
            continue
        if name == "model_id":
            if not isinstance(value, str):
                problems.append(f"model_id is {type(value).__name__}, not str ({what})")
        elif not callable(value):
            problems.append(f"{name} is not callable ({what})")
    prompts = getattr(world_model, "prompts", None)
    if prompts is not None and not isinstance(prompts, PromptSet):
        problems.append(f"prompts is {type(prompts).__name__}, not a PromptSet or None")
    if problems:
        raise ConfigError(
            f"world_model {type(world_model).__name__} does not follow the WorldModel protocol: "
            + "; ".join(problems)
            + ". Subclass aw_lookahead.worldmodel.BaseWorldModel (implement model_id and "
            "predict) or add the missing members."
        )
    return ProtocolWorldModel(cast(WorldModel, world_model))  # checked member by member


class ProtocolWorldModel(BaseWorldModel):
    """A world model written against the bare protocol, with the contract's defaults.

    It predicts with the wrapped object's ``predict`` / ``predict_many`` (a
    step's candidates in one ``predict_many`` call, settled) and renders with its
    ``prompts`` when it has them; everything else is the default (no server, no
    timeout, nothing to close). Subclass :class:`~.base.BaseWorldModel` for more.
    """

    def __init__(self, inner: WorldModel) -> None:
        self.inner = inner

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def prompts(self) -> PromptSet | None:  # type: ignore[override]  # read-only here
        """The wrapped object's ``prompts`` (read at each step: it may change them)."""
        prompts = getattr(self.inner, "prompts", None)
        return prompts if isinstance(prompts, PromptSet) else None

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction:
        return await self.inner.predict(trajectory, action)

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]:
        return await self.inner.predict_many(step.trajectory, step.actions, return_exceptions=True)
