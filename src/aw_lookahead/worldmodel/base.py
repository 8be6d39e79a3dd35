"""What a world model is (a protocol) and what it returns (a :class:`Prediction`)."""

from __future__ import annotations

import asyncio
import functools
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Protocol, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from aw_lookahead.errors import WorldModelError
from aw_lookahead.prompts.parse import ParseMethod
from aw_lookahead.trajectory import Action, Trajectory

__all__ = ["BaseWorldModel", "Prediction", "Usage", "WorldModel"]


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
    history turns dropped to fit the context.
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
    metadata: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class WorldModel(Protocol):
    """Predicts the observation that follows an action, given the trajectory so far.

    ``model_id`` identifies the model and its settings for caching: two world
    models with the same ``model_id`` must give interchangeable predictions.
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


class BaseWorldModel(ABC):
    """Convenience base: implement ``model_id`` and ``predict``; ``predict_many`` runs
    the predictions concurrently and settles them (only
    :class:`~aw_lookahead.errors.WorldModelError` is captured; bugs propagate)."""

    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @abstractmethod
    async def predict(self, trajectory: Trajectory, action: Action) -> Prediction: ...

    async def _prepare_step(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> Callable[[Action], Awaitable[Prediction]]:
        """What predicts one action of this step; the work shared by its candidates
        (checking the server, fitting the history) is done here, once.

        The default is :meth:`predict`. A ``WorldModelError`` raised here is
        every candidate's result.
        """
        return functools.partial(self.predict, trajectory)

    async def _predict_settled(
        self, trajectory: Trajectory, actions: Sequence[Action]
    ) -> list[Prediction | WorldModelError]:
        """The one settle loop: the step prepared once, its candidates predicted
        concurrently, each a prediction or its ``WorldModelError`` (bugs propagate)."""
        if not actions:
            return []
        try:
            predict_one = await self._prepare_step(trajectory, actions)
        except WorldModelError as exc:
            return [exc for _ in actions]
        results = await asyncio.gather(*(predict_one(a) for a in actions), return_exceptions=True)
        settled: list[Prediction | WorldModelError] = []
        for r in results:
            if isinstance(r, Prediction | WorldModelError):
                settled.append(r)
            else:
                raise r
        return settled

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
