"""What a world model is (a protocol) and what it returns (a :class:`Prediction`).

Besides the required members of :class:`WorldModel`, the engine uses three
optional ones when a world model has them, with a default path otherwise
(see :func:`prepare_step`, :func:`predict_step`, :func:`prompts_of`), so a
world model written against the bare protocol keeps working:

* ``prompts``: the :class:`~aw_lookahead.prompts.PromptSet` it renders with
  (``None``: the packaged prompts); the default rendering for cache keys uses it.
* ``prepare_step(trajectory, actions) -> Step``: render a step's candidates
  once (:class:`Step`); the engine derives its cache keys from the rendering.
* ``predict_step(step) -> list[Prediction | WorldModelError]``: predict a
  step's actions from that rendering, settled (as ``return_exceptions=True``);
  the default calls ``predict_many``.

:class:`Step` and :class:`Sampling` are defined in :mod:`.step` and re-exported here.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import ConfigError, WorldModelError
from aw_lookahead.prompts.parse import ParseMethod
from aw_lookahead.prompts.render import PromptSet
from aw_lookahead.trajectory import Action, Trajectory

from .step import Sampling, Step

__all__ = [
    "BaseWorldModel",
    "Prediction",
    "Sampling",
    "Step",
    "StepWorldModel",
    "Usage",
    "WorldModel",
    "check_world_model",
    "predict_step",
    "prepare_step",
    "prompts_of",
]


class Usage(BaseModel):
    """Token counts of one request; ``cached_tokens`` is set when the server reports it."""

    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Prediction(BaseModel):
    """The world model's answer for one action, with the evidence to judge it.

    ``observation`` is the parsed prediction; ``raw`` the reply text as the
    server sent it; ``truncated`` is true when the reply hit the token limit
    or its observation block was never closed; ``trimmed_turns`` counts the
    history turns dropped to fit the context. ``samples`` are further
    observations drawn in the same request (a world model asked for several
    predictions per action, e.g. ``OpenAIWorldModel(samples=4)``); the engine
    judges each to estimate how likely the action is to fail.
    """

    model_config = ConfigDict(extra="forbid")

    action: Action
    observation: str
    reasoning: str | None = None
    raw: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
    truncated: bool = False
    trimmed_turns: int = 0
    parse_method: ParseMethod | Literal["function"] = "tag"
    samples: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @property
    def observations(self) -> list[str]:
        """Every predicted observation of the action: the main one first, then the samples."""
        return [self.observation, *self.samples]


@runtime_checkable
class WorldModel(Protocol):
    """Predicts the observation that follows an action, given the trajectory so far.

    ``model_id`` identifies the model and its settings for caching: two world
    models with the same ``model_id`` must give interchangeable predictions.
    A served model may also have ``served_weights`` (``None`` until known; see
    :class:`~aw_lookahead.worldmodel.OpenAIWorldModel`): a cache file keys on it too.
    ``predict_many`` must send its requests together (one batch or concurrent
    requests), so a server with a prefix cache computes the shared history once.
    With ``return_exceptions=True`` a candidate that failed yields its
    :class:`~aw_lookahead.errors.WorldModelError` in its place instead of raising.
    """

    @property
    def model_id(self) -> str: ...

    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction: ...

    @overload
    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: Literal[False] = ...,
    ) -> list[Prediction]: ...

    @overload
    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: Literal[True],
    ) -> list[Prediction | WorldModelError]: ...

    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: bool = False,
    ) -> list[Prediction] | list[Prediction | WorldModelError]: ...


@runtime_checkable
class StepWorldModel(WorldModel, Protocol):
    """A world model with the optional step members (see the module docstring)."""

    def prepare_step(self, trajectory: Trajectory, actions: Sequence[Action]) -> Step: ...

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]: ...


_REQUIRED: dict[str, str] = {
    "model_id": "a str naming the model and its settings (the prediction cache keys on it)",
    "predict": "async predict(trajectory, action) -> Prediction",
    "predict_many": (
        "async predict_many(trajectory, actions, *, return_exceptions=False) -> list[Prediction]"
    ),
}


def check_world_model(world_model: object) -> None:
    """Raise :class:`~aw_lookahead.errors.ConfigError` naming what ``world_model`` lacks.

    Checks the required members of :class:`WorldModel` (``model_id`` must be a
    ``str``; ``predict``/``predict_many`` callables) and the types of the
    optional ones that are present. Whether the methods are async is not
    checked (a wrapper may return an awaitable): a sync one fails at the first
    step, and the engine's ``on_error`` takes it like any broken backend.
    """
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
    for name in ("prepare_step", "predict_step"):
        value = getattr(world_model, name, None)
        if value is not None and not callable(value):
            problems.append(f"{name} is set but not callable")
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


def prompts_of(world_model: object) -> PromptSet | None:
    """The optional ``prompts`` of ``world_model`` (``None`` when it has none)."""
    prompts = getattr(world_model, "prompts", None)
    return prompts if isinstance(prompts, PromptSet) else None


def prepare_step(world_model: object, trajectory: Trajectory, actions: Sequence[Action]) -> Step:
    """``world_model.prepare_step`` when it has one, else a lazily rendered :class:`Step`."""
    method = getattr(world_model, "prepare_step", None)
    if callable(method):
        step = method(trajectory, actions)
        if not isinstance(step, Step):
            raise TypeError(
                f"{type(world_model).__name__}.prepare_step returned {type(step).__name__}, "
                "not a Step"
            )
        return step
    return Step(trajectory, actions, prompts=prompts_of(world_model))


async def predict_step(world_model: WorldModel, step: Step) -> list[Prediction | WorldModelError]:
    """``world_model.predict_step`` when it has one, else ``predict_many``, settled."""
    method = getattr(world_model, "predict_step", None)
    if callable(method):
        result: list[Prediction | WorldModelError] = await method(step)
        return result
    return await world_model.predict_many(step.trajectory, step.actions, return_exceptions=True)


class BaseWorldModel(ABC):
    """Convenience base: implement ``model_id`` and ``predict``; ``predict_many`` runs
    the predictions concurrently and settles them (only
    :class:`~aw_lookahead.errors.WorldModelError` is captured; bugs propagate).

    Blocking code calls :meth:`predict_sync` / :meth:`predict_many_sync` and,
    when done, :meth:`close`. They run on the package's one shared background
    event loop (``aw_lookahead._sync.run_sync``, as ``Lookahead.gate_sync``
    does), so they work from plain scripts and from code that already runs an
    event loop, and a client the model keeps is opened and closed on that loop.
    """

    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @abstractmethod
    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction: ...

    def prepare_step(self, trajectory: Trajectory, actions: Sequence[Action]) -> Step:
        """The step's candidates, rendered lazily with this model's prompts (see :class:`Step`)."""
        return Step(trajectory, actions, prompts=prompts_of(self))

    async def _prepare_step(self, step: Step) -> Callable[[int], Awaitable[Prediction]]:
        """What predicts the ``i``-th action of ``step``; the work its candidates share
        (checking the server, fitting the history) is done here, once.

        The default is :meth:`predict`. A ``WorldModelError`` raised here is
        every candidate's result.
        """
        return lambda i: self.predict(step.trajectory, step.actions[i])

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]:
        """The one settle loop: the step prepared once, its candidates predicted
        concurrently, each a prediction or its ``WorldModelError`` (bugs propagate)."""
        if not step.actions:
            return []
        try:
            predict_one = await self._prepare_step(step)
        except WorldModelError as exc:
            return [exc for _ in step.actions]
        results = await asyncio.gather(
            *(predict_one(i) for i in range(len(step.actions))), return_exceptions=True
        )
        settled: list[Prediction | WorldModelError] = []
        for r in results:
            if isinstance(r, Prediction | WorldModelError):
                settled.append(r)
            else:
                raise r
        return settled

    async def _predict_settled(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> list[Prediction | WorldModelError]:
        return await self.predict_step(self.prepare_step(trajectory, actions))

    @overload
    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: Literal[False] = ...,
    ) -> list[Prediction]: ...

    @overload
    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: Literal[True],
    ) -> list[Prediction | WorldModelError]: ...

    async def predict_many(
        self,
        trajectory: Trajectory,
        actions: Sequence[Action],
        *,
        return_exceptions: bool = False,
    ) -> list[Prediction] | list[Prediction | WorldModelError]:
        settled = await self._predict_settled(trajectory, actions)
        if return_exceptions:
            return settled
        out: list[Prediction] = []
        for r in settled:
            if isinstance(r, WorldModelError):
                raise r
            out.append(r)
        return out

    def predict_sync(self, trajectory: Trajectory, action: Action) -> Prediction:
        """Blocking :meth:`predict`."""
        return run_sync(self.predict(trajectory, action))

    def predict_many_sync(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> list[Prediction]:
        """Blocking :meth:`predict_many`: raises the first failure's ``WorldModelError``
        (``await predict_many(..., return_exceptions=True)`` settles them instead)."""
        return run_sync(self.predict_many(trajectory, actions))

    def close(self) -> None:
        """Blocking close: the model's ``aclose()``, if it has one, on the loop the
        ``_sync`` methods use. (A model with its own blocking ``close``, such as
        ``VLLMOfflineWorldModel``, overrides this.)"""
        aclose = getattr(self, "aclose", None)
        if aclose is not None:
            run_sync(aclose())
