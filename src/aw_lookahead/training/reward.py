"""The hybrid reward of RL warm-up: rubric judge and rule verifier, as a TRL reward function.

:class:`HybridReward` is called the way TRL's ``GRPOTrainer`` calls a reward
function: ``reward(prompts=..., completions=..., observation=[...],
domain=[...], **other_columns) -> list[float]``. Completions may be
conversational (``[[{"role": "assistant", "content": ...}], ...]``) or plain
strings; each is parsed with the inference parser
(:func:`~aw_lookahead.prompts.parse_reply`), so the reward scores exactly the
observation a served model would hand to lookahead.

Per completion, with ``w_j = rubric_weight`` and ``w_r = rule_weight``:

* ``rule`` = 1.0 when the rule verifier
  (:func:`~aw_lookahead.evaluation.verify_sample`) passes, else
  ``0.5 * line_f1`` (partial credit, always below a pass);
* ``rubric`` = ``(mean - 1) / 4`` of the :class:`~aw_lookahead.evaluation.RubricJudge`
  scores (1-5 mapped to 0-1);
* reward = ``(w_j * rubric + w_r * rule) / (w_j + w_r)``, in ``[0, 1]``.

Guarantees:

* A judge failure for a sample (server down, timeout, unusable reply, any
  exception) gives that sample its rule score. It is counted
  (:attr:`HybridReward.stats`), logged as a warning naming the sample, and
  reported to TRL as the ``hybrid/judge_failed`` metric: never silent, never
  a crash.
* Judging one call takes at most ``deadline_s`` (default 600 s): a slow
  judge cannot stall training; answers still missing then are failures.
* Judge requests of one call run concurrently (at most ``concurrency`` at a
  time) and go through the project's provider, which redacts messages before
  they leave the process. Identical (prompt, observation, prediction) triples
  are judged once: duplicates within a call share one request, and successful
  verdicts are kept in an LRU of ``cache_size`` entries (a GRPO group of a
  small model often repeats a completion).
* ``judge=None`` with ``rubric_weight=0`` is rule-only; ``judge=None`` with a
  positive rubric weight is a :class:`~aw_lookahead.errors.ConfigError`.
* Each component is reported per call through TRL's ``log_metric`` hook
  (``hybrid/rule``, ``hybrid/rubric``, ``hybrid/judge_failed``,
  ``hybrid/judge_cached``), and kept in :attr:`HybridReward.last`.

The dataset column ``sample`` (a :class:`~aw_lookahead.trajectory.TurnSample`
as JSON, written by :func:`~aw_lookahead.training.grpo_data.grpo_dataset`) gives the
verifier and the judge the history, action and tools. Without it the sample
is rebuilt from ``domain``, ``observation`` and the prompt's last user message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aw_lookahead._sync import run_sync
from aw_lookahead.errors import ConfigError
from aw_lookahead.evaluation import RubricJudge, RuleResult, verify_sample
from aw_lookahead.prompts import parse_reply
from aw_lookahead.trajectory import Trajectory, TurnSample

__all__ = ["HybridReward", "RewardStats", "completion_text", "rule_score"]

log = logging.getLogger("aw_lookahead.training.reward")


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or the last assistant message of a conversation."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                content = message.get("content")
                if isinstance(content, list):  # content blocks
                    return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
                return str(content or "")
    raise ConfigError(
        f"a completion must be a string or a list of chat messages, got {type(completion).__name__}"
    )


def rule_score(rule: RuleResult) -> float:
    """1.0 for a rule pass, else half the line F1 (partial credit that never reaches a pass)."""
    return 1.0 if rule.verdict else 0.5 * rule.line_f1


@dataclass
class RewardStats:
    """Running counts over every call of one :class:`HybridReward`."""

    calls: int = 0
    samples: int = 0
    judged: int = 0
    judge_failed: int = 0
    judge_cached: int = 0
    failures: list[str] = field(default_factory=list)
    """The last few failure messages (``key: error``), newest last."""


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    return json.dumps(prompt, sort_keys=True, ensure_ascii=False, default=str)


def _last_user(prompt: Any) -> str:
    if isinstance(prompt, str):
        return prompt
    for message in reversed(list(prompt)):
        if isinstance(message, dict) and message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


def _sample_of(row: dict[str, Any], prompt: Any, index: int) -> TurnSample:
    raw = row.get("sample")
    if raw:
        try:
            data = json.loads(raw) if isinstance(raw, str) else raw
            return TurnSample.model_validate(data)
        except ValueError as exc:
            raise ConfigError(
                f"reward input {index}: column 'sample' is not a TurnSample ({exc})"
            ) from exc
    if row.get("observation") is None or row.get("domain") is None:
        raise ConfigError(
            f"reward input {index}: the dataset needs the columns 'observation' (the real next "
            "observation) and 'domain', or 'sample' (a TurnSample as JSON); build it with "
            "aw_lookahead.training.grpo_data.grpo_dataset"
        )
    trajectory = Trajectory(
        domain=row["domain"],
        turns=[{"action": _last_user(prompt), "observation": str(row["observation"])}],
    )
    return TurnSample(trajectory=trajectory, turn_idx=1)


def _value(result: asyncio.Task[float | None] | float, late: set[Any]) -> float | None:
    if not isinstance(result, asyncio.Task):
        return result
    return None if result in late else result.result()


class HybridReward:
    """``rubric_weight`` x rubric judge + ``rule_weight`` x rule verifier (module docstring).

    ``judge`` is a :class:`~aw_lookahead.evaluation.RubricJudge` on any
    OpenAI-compatible endpoint, or ``None`` for a rule-only reward.
    """

    def __init__(
        self,
        judge: RubricJudge | None = None,
        *,
        rubric_weight: float = 0.9,
        rule_weight: float = 0.1,
        concurrency: int = 8,
        cache_size: int = 4096,
        deadline_s: float | None = 600.0,
    ) -> None:
        if rubric_weight < 0 or rule_weight < 0 or rubric_weight + rule_weight <= 0:
            raise ConfigError(
                f"reward weights must be >= 0 and not both 0, got rubric_weight={rubric_weight}, "
                f"rule_weight={rule_weight}"
            )
        if judge is None and rubric_weight > 0:
            raise ConfigError(
                "rubric_weight > 0 needs a judge: pass judge=RubricJudge(model, base_url=...), "
                "or rubric_weight=0 for a rule-only reward"
            )
        if concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
        if deadline_s is not None and deadline_s <= 0:
            raise ConfigError(f"deadline_s must be > 0 (or None), got {deadline_s}")
        self.judge = judge if rubric_weight > 0 else None
        self.rubric_weight = rubric_weight
        self.rule_weight = rule_weight
        self.concurrency = concurrency
        self.cache_size = cache_size
        self.deadline_s = deadline_s
        self.stats = RewardStats()
        self.last: dict[str, float] = {}
        self._cache: OrderedDict[str, float] = OrderedDict()
        # TRL names a reward function's metrics after __name__ (rewards/<name>/mean).
        self.__name__ = "hybrid_reward"

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        **columns: Any,
    ) -> list[float]:
        """Score each completion (TRL's calling convention; see the module docstring)."""
        return run_sync(self.score(prompts, completions, **columns))

    async def score(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        **columns: Any,
    ) -> list[float]:
        """The async core of :meth:`__call__`: same arguments, same result."""
        log_metric: Callable[[str, float], None] | None = columns.pop("log_metric", None)
        n = len(completions)
        if len(prompts) != n:
            raise ConfigError(f"{len(prompts)} prompts but {n} completions; pass one per pair")
        rows = [
            {k: v[i] for k, v in columns.items() if isinstance(v, list) and len(v) == n}
            for i in range(n)
        ]
        samples = [_sample_of(rows[i], prompts[i], i) for i in range(n)]
        predictions = [parse_reply(completion_text(c)).observation for c in completions]
        rules = [verify_sample(s, p) for s, p in zip(samples, predictions, strict=True)]
        rule_scores = [rule_score(r) for r in rules]
        rubric: list[float | None] = [None] * n
        failed = cached = 0
        if self.judge is not None:
            rubric, failed, cached = await self._judge_all(prompts, samples, predictions, rules)
        rewards = []
        for rule, judged in zip(rule_scores, rubric, strict=True):
            if judged is None:
                rewards.append(rule)
            else:
                total = self.rubric_weight * judged + self.rule_weight * rule
                rewards.append(total / (self.rubric_weight + self.rule_weight))
        self.stats.calls += 1
        self.stats.samples += n
        self.stats.judged += sum(1 for r in rubric if r is not None)
        self.stats.judge_failed += failed
        self.stats.judge_cached += cached
        judged_scores = [r for r in rubric if r is not None]
        self.last = {
            "hybrid/reward": sum(rewards) / n if n else 0.0,
            "hybrid/rule": sum(rule_scores) / n if n else 0.0,
            "hybrid/rule_pass": sum(r.verdict for r in rules) / n if n else 0.0,
            "hybrid/judge_failed": float(failed),
            "hybrid/judge_cached": float(cached),
        }
        if judged_scores:
            self.last["hybrid/rubric"] = sum(judged_scores) / len(judged_scores)
        if log_metric is not None:
            for name, value in self.last.items():
                log_metric(name, value)
        return rewards

    async def _judge_all(
        self,
        prompts: Sequence[Any],
        samples: list[TurnSample],
        predictions: list[str],
        rules: list[RuleResult],
    ) -> tuple[list[float | None], int, int]:
        assert self.judge is not None
        judge = self.judge
        keys = [
            hashlib.sha256(
                json.dumps(
                    [judge.model, _prompt_text(p), s.observation, pred], ensure_ascii=False
                ).encode()
            ).hexdigest()
            for p, s, pred in zip(prompts, samples, predictions, strict=True)
        ]
        gate = asyncio.Semaphore(self.concurrency)
        pending: dict[str, asyncio.Task[float | None]] = {}
        first: dict[str, int] = {}

        async def one(i: int) -> float | None:
            async with gate:
                try:
                    outcome = await judge.score(samples[i], predictions[i], rules[i])
                except Exception as exc:  # never a crash: the sample keeps its rule score
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    if outcome.scores is not None:
                        return (outcome.scores.total - 1.0) / 4.0
                    error = outcome.error or "judge gave no scores"
            self._fail(samples[i], error)
            return None

        results: list[asyncio.Task[float | None] | float] = []
        shared: list[int] = []
        for i, key in enumerate(keys):
            if key in self._cache:
                self._cache.move_to_end(key)
                results.append(self._cache[key])
                shared.append(i)
            elif key in pending:
                results.append(pending[key])
                shared.append(i)
            else:
                pending[key] = asyncio.ensure_future(one(i))
                first[key] = i
                results.append(pending[key])
        late: set[asyncio.Task[float | None]] = set()
        if pending:
            _, late = await asyncio.wait(pending.values(), timeout=self.deadline_s)
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        for key, task in pending.items():
            if task in late:
                self._fail(samples[first[key]], f"no verdict within {self.deadline_s} s")
                continue
            value = task.result()
            if value is not None:
                self._cache[key] = value
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        scores = [_value(r, late) for r in results]
        failed = sum(1 for s in scores if s is None)
        cached = sum(1 for i in shared if scores[i] is not None)
        return scores, failed, cached

    def _fail(self, sample: TurnSample, error: str) -> None:
        name = sample.id if sample.id is not None else sample.trajectory.id or "sample"
        message = f"{name}#{sample.turn_idx}: {error[:300]}"
        self.stats.failures = [*self.stats.failures[-19:], message]
        log.warning("judge failed, the sample gets its rule score: %s", message)
