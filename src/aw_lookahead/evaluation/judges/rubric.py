"""Our rubric judge: five dimensions scored 1-5 by a chat model through structured outputs.

The judge sees the task context, the current action, the real observation,
the world model's *parsed* observation (its thinking is never shown) and our
rule verdict as an anchor. Its reply is constrained by a JSON schema
(``response_format`` ``json_schema``), so a conforming server always returns
parseable JSON; a reply that still fails validation (cut off at
``max_tokens``, a server without structured outputs) is retried at most
``retries`` times and then reported as failed, never as a pass.

Scores go to the published 0-100 scale as ``(mean - 1) / 4 * 100``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from openai import AsyncOpenAI
from pydantic import BaseModel, Field, ValidationError

from aw_lookahead.endpoint import OpenAIProvider, UsesProvider, request_body
from aw_lookahead.errors import ConfigError, JudgeError, WorldModelError
from aw_lookahead.evaluation.rules.verifier import RuleResult
from aw_lookahead.trajectory import TurnSample, action_text

from .rubric_prompt import RUBRIC_SYSTEM, render_judge_user

__all__ = [
    "DIMENSIONS",
    "JUDGE_REGEX",
    "JUDGE_SCHEMA",
    "JudgeOutcome",
    "JudgeScores",
    "RubricJudge",
    "to_published_scale",
]

DIMENSIONS: tuple[str, ...] = ("format", "factuality", "consistency", "realism", "quality")

_SCORE = {"type": "integer", "enum": [1, 2, 3, 4, 5]}
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{d: _SCORE for d in DIMENSIONS},
        "note": {"type": "string", "maxLength": 80},
    },
    "required": [*DIMENSIONS, "note"],
    "additionalProperties": False,
}

# The same object as a regex without free whitespace: a small model under a JSON
# schema can loop on newlines until max_tokens; this grammar cannot.
JUDGE_REGEX = (
    r"\{" + ", ".join(f'"{d}": [1-5]' for d in DIMENSIONS) + r', "note": "[^"\\\n]{0,80}"\}'
)


def to_published_scale(mean_1_to_5: float) -> float:
    """The AgentWorldBench reporting scale: ``(mean - 1) / 4 * 100``."""
    return (mean_1_to_5 - 1.0) / 4.0 * 100.0


class JudgeScores(BaseModel):
    """One verdict: each dimension 1-5 and a short note."""

    format: int = Field(ge=1, le=5)
    factuality: int = Field(ge=1, le=5)
    consistency: int = Field(ge=1, le=5)
    realism: int = Field(ge=1, le=5)
    quality: int = Field(ge=1, le=5)
    note: str = ""

    @property
    def total(self) -> float:
        """Mean of the five dimensions (1-5)."""
        values: list[int] = [getattr(self, d) for d in DIMENSIONS]
        return sum(values) / len(values)


class JudgeOutcome(BaseModel):
    """The judge's result for one sample; ``scores`` is ``None`` exactly when it failed."""

    scores: JudgeScores | None = None
    attempts: int = 0
    raw: list[str] = Field(default_factory=list)
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.scores is None


def parse_scores(text: str) -> JudgeScores:
    """Validate a judge reply; raises :class:`JudgeError` (keeping the text) when unusable."""
    try:
        data = json.loads(text)
        return JudgeScores.model_validate(data)
    except (json.JSONDecodeError, ValidationError) as exc:
        raise JudgeError(f"unusable judge reply: {str(exc).splitlines()[0]}", raw=text) from exc


class RubricJudge(UsesProvider):
    """Scores predictions on our rubric with a chat model behind an OpenAI-compatible API.

    ``base_url`` / ``api_key`` default to ``AW_LOOKAHEAD_JUDGE_BASE_URL`` /
    ``AW_LOOKAHEAD_JUDGE_API_KEY`` (see :mod:`aw_lookahead.endpoint`).

    ``constraint`` picks how the reply is forced into JSON: ``"regex"``
    (vLLM/SGLang ``structured_outputs``, compact JSON with no free whitespace:
    the default, and robust even for tiny models) or ``"json_schema"`` (the
    OpenAI ``response_format``, for other servers). ``temperature`` applies to
    the first attempt; retries sample at ``retry_temperature`` so they can
    differ from a bad first reply. Thinking is switched off in the chat
    template, so the constraint applies to the answer itself.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        max_tokens: int = 256,
        temperature: float = 0.0,
        retry_temperature: float = 0.7,
        retries: int = 2,
        timeout: float = 120.0,
        max_context_chars: int = 6000,
        constraint: Literal["regex", "json_schema"] = "regex",
    ) -> None:
        if constraint not in ("regex", "json_schema"):
            raise ConfigError(f"constraint must be 'regex' or 'json_schema', got {constraint!r}")
        self.constraint = constraint
        self.model = model
        self.provider = OpenAIProvider.for_judge(base_url, api_key, client, max_retries=2)
        self.base_url = self.provider.base_url
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.retry_temperature = retry_temperature
        self.retries = retries
        self.timeout = timeout
        self.max_context_chars = max_context_chars

    def messages(
        self, sample: TurnSample, prediction: str, rule: RuleResult | None
    ) -> list[dict[str, str]]:
        """The judge's messages for one sample (system rubric + one user turn)."""
        history = sample.history
        context = "\n\n".join(
            f"### Turn {i}\nAction: {action_text(t.action)}\nObservation:\n{t.observation}"
            for i, t in enumerate(history.turns, start=1)
        )
        if len(context) > self.max_context_chars:
            context = "[... earlier turns cut ...]\n" + context[-self.max_context_chars :]
        user = render_judge_user(
            domain=history.domain.value,
            task=history.task or "",
            context=context,
            action=action_text(sample.action),
            truth=sample.observation,
            prediction=prediction,
            anchor=rule.summary() if rule is not None else "not available",
        )
        return [{"role": "system", "content": RUBRIC_SYSTEM}, {"role": "user", "content": user}]

    async def _ask(self, messages: list[dict[str, str]], temperature: float) -> tuple[str, bool]:
        kwargs: dict[str, Any] = {"max_tokens": self.max_tokens, "temperature": temperature}
        body = request_body(None, thinking=False)
        if self.constraint == "regex":
            body["structured_outputs"] = {"regex": JUDGE_REGEX}
        else:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "fidelity_scores", "schema": JUDGE_SCHEMA, "strict": True},
            }
        completion = await self.provider.chat(
            messages, model=self.model, timeout_s=self.timeout, extra_body=body, **kwargs
        )
        choice = completion.choices[0]
        return choice.message.content or "", choice.finish_reason == "length"

    async def score(
        self, sample: TurnSample, prediction: str, rule: RuleResult | None = None
    ) -> JudgeOutcome:
        """Judge one prediction; failures come back as a failed outcome, never raised."""
        messages = self.messages(sample, prediction, rule)
        outcome = JudgeOutcome()
        for attempt in range(self.retries + 1):
            outcome.attempts = attempt + 1
            temperature = self.temperature if attempt == 0 else self.retry_temperature
            try:
                text, cut = await self._ask(messages, temperature)
            except WorldModelError as exc:
                outcome.error = f"{type(exc).__name__}: {exc}"
                continue
            outcome.raw.append(text)
            try:
                outcome.scores = parse_scores(text)
            except JudgeError as exc:
                outcome.error = f"{exc}{' (cut at max_tokens)' if cut else ''}"
                continue
            outcome.error = None
            return outcome
        return outcome
