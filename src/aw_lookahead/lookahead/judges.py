"""Feasibility judges: the :class:`Judge` protocol, :class:`LLMJudge` and verdict combination.

A judge reads one prediction and returns a :class:`Verdict`. Judges combine:
the most severe outcome wins (``types.SEVERITY``), progress is the mean of the
judges that give one, and all signals are kept.

:class:`LLMJudge` asks a chat model for a strict JSON verdict through vLLM's
``response_format`` json_schema, with thinking switched off. A reply that is
not valid JSON for that schema raises :class:`~aw_lookahead.errors.JudgeError`
(keeping the raw text); it is never read as a pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from openai import AsyncOpenAI
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aw_lookahead.endpoint import (
    ENV_MODEL,
    OpenAIProvider,
    UsesProvider,
    request_body,
)
from aw_lookahead.errors import ConfigError, JudgeError, WorldModelError
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel.base import Prediction

from .types import SEVERITY, Outcome, Signal, Verdict

if TYPE_CHECKING:
    from aw_lookahead.worldmodel.openai_api import OpenAIWorldModel

__all__ = ["VERDICT_SCHEMA", "Judge", "LLMJudge", "combine_verdicts"]


@runtime_checkable
class Judge(Protocol):
    """Reads a predicted observation and says whether the action would succeed."""

    async def judge(
        self,
        trajectory: Trajectory,
        action: Action,
        prediction: Prediction,
        *,
        task: str | None = None,
    ) -> Verdict: ...


def combine_verdicts(verdicts: Sequence[Verdict]) -> Verdict:
    """Most severe outcome wins; progress is the mean of the given ones; signals concatenate."""
    if not verdicts:
        return Verdict(outcome=Outcome.UNKNOWN, reason="no judge")
    worst = max(verdicts, key=lambda v: SEVERITY[v.outcome])
    progresses = [v.progress for v in verdicts if v.progress is not None]
    reasons = [v.reason for v in verdicts if v.outcome is worst.outcome and v.reason]
    return Verdict(
        outcome=worst.outcome,
        progress=sum(progresses) / len(progresses) if progresses else None,
        reason="; ".join(dict.fromkeys(reasons)),
        signals=[s for v in verdicts for s in v.signals],
        tokens=sum(v.tokens for v in verdicts),
    )


VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "outcome": {"type": "string", "enum": ["success", "failure", "no_op", "risky"]},
        "progress": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": "string", "maxLength": 120},
    },
    "required": ["outcome", "progress", "reason"],
    "additionalProperties": False,
}

_SYSTEM = (
    "You review one step of a software agent before it runs. You get the task, the recent "
    "history, the proposed action and the observation a simulator predicts for it. Decide "
    "what the action would do:\n"
    '- "success": it works and moves the task forward\n'
    '- "failure": it errors, is rejected or cannot work\n'
    '- "no_op": it runs but changes nothing useful\n'
    '- "risky": it destroys or overwrites data, kills processes, rewrites shared history, '
    "or has other effects that are hard to undo\n"
    "progress is how far the task is along after this step, from 0 to 1. Answer only with "
    'JSON: {"outcome": ..., "progress": ..., "reason": "<one sentence>"}.'
)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: Outcome
    progress: float = Field(ge=0.0, le=1.0)
    reason: str


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2 :]


class LLMJudge(UsesProvider):
    """A chat model's verdict on a prediction, as strict JSON.

    Give ``base_url``/``model`` (defaults: the world model's environment,
    ``AW_LOOKAHEAD_BASE_URL`` / ``AW_LOOKAHEAD_MODEL``), an ``AsyncOpenAI`` ``client``, or use
    :meth:`from_world_model` to judge with the world model's own server.
    ``history_turns`` recent turns are shown, each clipped to ``max_chars``.
    ``structured=False`` drops ``response_format`` (servers without structured
    outputs); the reply must still be a valid verdict or the judge raises.
    The schema caps ``reason`` at 120 characters, so a model that repeats
    itself inside the string still closes the JSON within the default
    ``max_tokens`` (measured on SmolLM2-135M: without the cap 2 verdicts in 80
    ran into a 120-token limit).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        max_tokens: int = 200,
        temperature: float = 0.0,
        timeout: float = 60.0,
        history_turns: int = 4,
        max_chars: int = 2000,
        extra_body: dict[str, Any] | None = None,
        structured: bool = True,
    ) -> None:
        self.provider = OpenAIProvider.resolve(
            base_url=base_url, api_key=api_key, client=client, model=model
        )
        self.base_url = self.provider.base_url
        self.model = self.provider.model or ""
        if not self.model:
            raise ConfigError(
                f"LLMJudge needs a model name: pass model=... or set {ENV_MODEL} "
                "(or use LLMJudge.from_world_model(wm))"
            )
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout = timeout
        self.history_turns = history_turns
        self.max_chars = max_chars
        self.extra_body = dict(extra_body or {})
        self.structured = structured

    @classmethod
    def from_world_model(cls, world_model: OpenAIWorldModel, **kwargs: Any) -> LLMJudge:
        """Judge with the same server and model as an ``OpenAIWorldModel`` (its model's
        name must be known: given, or learnt with ``resolve_model()``)."""
        return cls(world_model.model, base_url=world_model.base_url, **kwargs)

    def messages(
        self, trajectory: Trajectory, action: Action, prediction: Prediction, task: str | None
    ) -> list[dict[str, str]]:
        """The chat messages sent to the judge model."""
        parts = [
            f"Domain: {trajectory.domain.value}",
            f"Task: {task or trajectory.task or '(not given)'}",
        ]
        recent = trajectory.turns[-self.history_turns :] if self.history_turns else []
        for turn in recent:
            parts.append(
                f"Earlier action: {_clip(action_text(turn.action), self.max_chars)}\n"
                f"Earlier observation: {_clip(turn.observation, self.max_chars)}"
            )
        parts.append(f"Proposed action: {_clip(action_text(action), self.max_chars)}")
        parts.append(f"Predicted observation:\n{_clip(prediction.observation, self.max_chars)}")
        return [
            {"role": "system", "content": _SYSTEM},
            {"role": "user", "content": "\n\n".join(parts)},
        ]

    async def judge(
        self,
        trajectory: Trajectory,
        action: Action,
        prediction: Prediction,
        *,
        task: str | None = None,
    ) -> Verdict:
        request: dict[str, Any] = {
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "extra_body": request_body(self.extra_body, thinking=False),
        }
        if self.structured:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "schema": VERDICT_SCHEMA, "strict": True},
            }
        try:
            async with self.provider.connect():  # per call: any event loop works
                completion = await self.provider.chat(
                    self.messages(trajectory, action, prediction, task),
                    model=self.model,
                    timeout_s=self.timeout,
                    **request,
                )
        except WorldModelError as exc:
            raise JudgeError(
                f"the judge model failed: {type(exc).__name__}: {exc} "
                f"Check that the server runs and serves {self.model!r}."
            ) from exc
        choice = completion.choices[0] if completion.choices else None
        raw = (choice.message.content or "") if choice else ""
        try:
            reply = _Reply.model_validate(json.loads(raw))
        except (json.JSONDecodeError, ValidationError) as exc:
            reason = (
                "was cut off at max_tokens"
                if choice and choice.finish_reason == "length"
                else "is not a valid verdict"
            )
            raise JudgeError(
                f"the judge's reply {reason} (expected JSON {{outcome, progress, reason}}); "
                "serve the judge with structured outputs (vLLM response_format json_schema) "
                "or raise max_tokens",
                raw=raw,
            ) from exc
        tokens = completion.usage.total_tokens if completion.usage else 0
        signal = Signal(
            source="llm",
            name=f"llm.{reply.outcome.value}",
            outcome=reply.outcome,
            detail=reply.reason,
        )
        return Verdict(
            outcome=reply.outcome,
            progress=reply.progress,
            reason=reply.reason,
            signals=[signal],
            tokens=tokens,
        )
