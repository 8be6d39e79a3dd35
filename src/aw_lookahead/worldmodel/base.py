"""What a world model is: the :class:`WorldModel` protocol, the whole contract
(:class:`BaseWorldModel`) and what it returns (a :class:`Prediction`).

The protocol is what a user's class must have (``model_id``, ``predict``,
``predict_many``). Everything else the engine, the cache, the calibration and
the adapters use is a member of :class:`BaseWorldModel` with a default, so
code outside this package calls members and never probes for them:

* ``prompts``: the :class:`~aw_lookahead.prompts.PromptSet` it renders with
  (``None``: the packaged prompts); the cache keys are rendered with it.
* ``timeout``: its client's timeout in seconds (``None``: it has none); the
  engine's deadline is longer.
* ``prepare_step(trajectory, actions) -> Step`` and ``predict_step(step)``:
  render a step's candidates once (:class:`Step`; the cache keys derive from
  that rendering) and predict them from it, settled.
* ``served`` and ``resolve_model()``: which model and weights a server serves
  (learnt once, by ``resolve_model``; ``has_server`` says whether a server
  stands behind the model at all), and ``model_name``, the name its
  calibration file is found by.
* ``sampling_settings()``: the settings that shape its predictions (recorded
  with a calibration).
* ``aclose()`` / ``close()``: release its clients.

A world model written against the bare protocol is given these defaults by
:func:`~aw_lookahead.worldmodel.conform.conform`, which the engine calls once.
:class:`Step` and :class:`Sampling` are defined in :mod:`.step` and re-exported here.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import WorldModelError
from aw_lookahead.prompts.parse import ParseMethod
from aw_lookahead.prompts.render import PromptSet
from aw_lookahead.trajectory import Action, Trajectory

from .step import Sampling, Step

__all__ = [
    "BaseWorldModel",
    "Prediction",
    "Sampling",
    "ServedModel",
    "Step",
    "Usage",
    "WorldModel",
    "settle",
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
    ``predict_many`` must send its requests together (one batch or concurrent
    requests), so a server with a prefix cache computes the shared history once.
    With ``return_exceptions=True`` a candidate that failed yields its
    :class:`~aw_lookahead.errors.WorldModelError` in its place instead of raising.
    The rest of the contract, with its defaults, is :class:`BaseWorldModel`'s.
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


@dataclass(frozen=True)
class ServedModel:
    """What a server said it serves, learnt once by :meth:`BaseWorldModel.resolve_model`.

    ``root`` is the weights' folder or name (vLLM's ``root``) and ``weights``
    what tells weights apart (:meth:`~aw_lookahead.endpoint.ModelInfo.weights`),
    both ``""`` when the server reports none; ``context_tokens`` and
    ``max_samples`` are what one request may use (``None``: the server does not
    say); ``listed_context`` is the context ``/v1/models`` lists.
    """

    name: str
    root: str = ""
    weights: str = ""
    context_tokens: int | None = None
    max_samples: int | None = None
    listed_context: int | None = None


async def settle(
    count: int, predict_one: Callable[[int], Awaitable[Prediction]]
) -> list[Prediction | WorldModelError]:
    """``predict_one(i)`` for ``i < count``, concurrently, in order: each a prediction or
    its :class:`~aw_lookahead.errors.WorldModelError`; any other exception (a bug) propagates."""
    results = await asyncio.gather(*(predict_one(i) for i in range(count)), return_exceptions=True)
    settled: list[Prediction | WorldModelError] = []
    for r in results:
        if isinstance(r, Prediction | WorldModelError):
            settled.append(r)
        else:
            raise r
    return settled


class BaseWorldModel(ABC):
    """The whole world-model contract: implement ``model_id`` and ``predict``; the rest
    has defaults (see the module docstring), and ``predict_many`` runs the predictions
    concurrently and settles them (only :class:`~aw_lookahead.errors.WorldModelError`
    is captured; bugs propagate).

    Blocking code calls :meth:`predict_sync` / :meth:`predict_many_sync` and,
    when done, :meth:`close`. They run on the package's one shared background
    event loop (``aw_lookahead._sync.run_sync``, as ``Lookahead.gate_sync``
    does), so they work from plain scripts and from code that already runs an
    event loop, and a client the model keeps is opened and closed on that loop.
    """

    prompts: PromptSet | None = None
    """The prompts it renders with (``None``: the packaged ones)."""

    timeout: float | None = None
    """Its client's timeout in seconds (``None``: it has none; the engine then counts 60 s)."""

    has_server: ClassVar[bool] = False
    """Whether a server stands behind it: then :meth:`resolve_model` asks the server which
    model and weights it serves (:attr:`served`), and a cache file keys on the weights."""

    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @abstractmethod
    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction: ...

    # ------------------------------------------------------------------ what serves it

    @property
    def served(self) -> ServedModel | None:
        """What :meth:`resolve_model` learnt (``None`` until then; always ``None``
        without a server)."""
        return None

    @property
    def model_name(self) -> str | None:
        """The name its calibration file is found by: the served model's name (``None``
        until learnt); without a server, :attr:`model_id`."""
        return self.model_id

    async def resolve_model(self) -> str:
        """Ask the server once which model it serves (later calls answer from memory) and
        return its name. Without a server: :attr:`model_id`, asking nothing."""
        return self.model_id

    def sampling_settings(self) -> dict[str, Any]:
        """The settings that shape its predictions (``temperature``, ``samples``,
        ``logprobs``, ...), recorded with a calibration; empty when it has none."""
        return {}

    # ------------------------------------------------------------------ steps

    def prepare_step(self, trajectory: Trajectory, actions: Sequence[Action]) -> Step:
        """The step's candidates, rendered lazily with this model's prompts (see :class:`Step`)."""
        return Step(trajectory, actions, prompts=self.prompts)

    async def predict_step(self, step: Step) -> list[Prediction | WorldModelError]:
        """Every action of ``step`` predicted concurrently with :meth:`predict`, settled
        (see :func:`settle`). A backend that predicts from the step's rendering, or does
        work its candidates share, overrides this."""
        return await settle(
            len(step.actions), lambda i: self.predict(step.trajectory, step.actions[i])
        )

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
        settled = await self.predict_step(self.prepare_step(trajectory, actions))
        if return_exceptions:
            return settled
        out: list[Prediction] = []
        for r in settled:
            if isinstance(r, WorldModelError):
                raise r
            out.append(r)
        return out

    # ------------------------------------------------------------------ blocking use, closing

    def predict_sync(self, trajectory: Trajectory, action: Action) -> Prediction:
        """Blocking :meth:`predict`."""
        return run_sync(self.predict(trajectory, action))

    def predict_many_sync(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> list[Prediction]:
        """Blocking :meth:`predict_many`: raises the first failure's ``WorldModelError``
        (``await predict_many(..., return_exceptions=True)`` settles them instead)."""
        return run_sync(self.predict_many(trajectory, actions))

    async def aclose(self) -> None:
        """Release its clients (the default holds none). Safe to call twice."""
        return None

    def close(self) -> None:
        """Blocking :meth:`aclose`, on the loop the ``_sync`` methods use. (A model with
        its own blocking close, such as ``VLLMOfflineWorldModel``, overrides this.)"""
        if type(self).aclose is not BaseWorldModel.aclose:
            run_sync(self.aclose())
