"""GRPO prompts from trajectories: one target turn per trajectory unless asked otherwise.

Turn-level samples of one trajectory share long prefixes; in one GRPO batch
they would be near-identical prompts whose rewards move together, which
collapses the group-relative signal. So :func:`grpo_dataset` keeps
``turns_per_trajectory`` (default 1) kept turns of each trajectory, drawn with
the seed. Every row therefore comes from a different trajectory when the
default is kept, and no batch can hold two prompts of one trajectory.

"One trajectory" means: a trajectory record (our schema, the recorder's
output) is one; AgentWorldBench records and shadow-log lines are one sample
each, and samples whose trajectory starts the same way (same domain, task,
initial state and first action) are grouped as one trajectory, since that is
the prefix they share.

Rows are what ``GRPOTrainer`` takes (a ``datasets.Dataset`` built from them):
``prompt`` (the chat messages :class:`~aw_lookahead.worldmodel.OpenAIWorldModel`
sends, without the answer), ``observation`` (the real next observation),
``domain``, ``sample`` (the :class:`~aw_lookahead.trajectory.TurnSample` as
JSON, for the verifier and the judge) and ``trajectory`` (the group key).
A prompt longer than ``max_prompt_len`` tokens drops its oldest turns after
the first, as inference trimming does; one that still does not fit is
dropped and counted.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aw_lookahead.errors import ConfigError
from aw_lookahead.prompts import PromptSet, render_messages
from aw_lookahead.trajectory import Trajectory, Turn, TurnSample, action_text

from .classify import ClassifyConfig
from .data import ChatSample, DataReport, build_samples, read_training_records, target_answer

__all__ = ["GRPODataReport", "grpo_dataset", "trajectory_group"]


def trajectory_group(sample: TurnSample) -> str:
    """The key of the trajectory a lone sample belongs to: a hash of how it starts."""
    traj = sample.trajectory
    first = traj.turns[0].action if traj.turns else ""
    parts = [traj.domain.value, traj.task or "", traj.initial_state or "", action_text(first)]
    return "start:" + hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


@dataclass
class GRPODataReport:
    """Counts of the prompt pool: the turn classification, then the per-trajectory draw."""

    data: DataReport = field(default_factory=DataReport)
    trajectories: int = 0
    candidates: int = 0
    rows: int = 0
    too_long: int = 0
    turns_per_trajectory: int = 1

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "data"}
        out["data"] = self.data.as_dict()
        return out

    def summary(self) -> str:
        return (
            f"{self.data.summary()}\nGRPO prompts: {self.rows} from {self.trajectories} "
            f"trajectories ({self.turns_per_trajectory} turn(s) each at most, "
            f"{self.candidates} kept turns to draw from), {self.too_long} too long for the prompt "
            "budget"
        )


_OPEN, _CLOSE = target_answer("\x00").split("\x00")


def _observation(answer: str | None) -> str:
    text = answer or ""
    if text.startswith(_OPEN) and text.endswith(_CLOSE):
        return text[len(_OPEN) : len(text) - len(_CLOSE)]
    raise ConfigError(f"unexpected training answer layout: {text[:80]!r}")


def _prompt_tokens(tokenizer: Any, messages: list[dict[str, str]]) -> int:
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return len(ids)


def _fit(
    sample: ChatSample, tokenizer: Any, max_len: int, prompts: PromptSet | None
) -> list[dict[str, str]] | None:
    messages = sample.messages[:-1]
    if tokenizer is None:
        return messages
    skip = 0
    history = sample.history
    while _prompt_tokens(tokenizer, messages) > max_len:
        if history is None or skip + 1 >= len(history.turns):
            return None
        skip += 1
        messages = render_messages(history, sample.action, prompts=prompts, skip_turns=skip)
        if sample.user_override is not None:
            messages[-1] = {"role": "user", "content": sample.user_override}
    return messages


def grpo_dataset(
    paths: Iterable[str | Path],
    *,
    tokenizer: Any = None,
    max_prompt_len: int = 2048,
    turns_per_trajectory: int = 1,
    config: ClassifyConfig | None = None,
    prompts: PromptSet | None = None,
    seed: int = 0,
) -> tuple[list[dict[str, Any]], GRPODataReport]:
    """Rows for ``GRPOTrainer`` (see the module docstring) and the report of how they were drawn.

    ``tokenizer`` (optional) enforces ``max_prompt_len``; without it prompts are not trimmed.
    """
    if turns_per_trajectory < 1:
        raise ConfigError(f"turns_per_trajectory must be >= 1, got {turns_per_trajectory}")
    report = GRPODataReport(turns_per_trajectory=turns_per_trajectory)
    groups: dict[str, str] = {}
    records: list[tuple[str, Trajectory | TurnSample]] = []
    for key, record in read_training_records(paths):
        if isinstance(record, TurnSample):
            groups[key] = trajectory_group(record)
        else:
            groups[key] = "trajectory:" + key
        records.append((key, record))
    by_group: dict[str, list[ChatSample]] = {}
    samples = build_samples(
        records, targets="each", config=config, prompts=prompts, report=report.data
    )
    for sample in samples:
        record_key = sample.key.rsplit("#", 1)[0]
        by_group.setdefault(groups[record_key], []).append(sample)
    rows: list[dict[str, Any]] = []
    for group, candidates in by_group.items():
        report.trajectories += 1
        report.candidates += len(candidates)
        order = list(range(len(candidates)))
        random.Random(f"{seed}:{group}").shuffle(order)
        taken = 0
        for i in order:
            if taken == turns_per_trajectory:
                break
            sample = candidates[i]
            messages = _fit(sample, tokenizer, max_prompt_len, prompts)
            if messages is None:
                report.too_long += 1
                continue
            taken += 1
            rows.append(_row(sample, messages, group))
    report.rows = len(rows)
    return rows, report


def _row(sample: ChatSample, messages: list[dict[str, str]], group: str) -> dict[str, Any]:
    assert sample.history is not None
    observation = _observation(sample.answer)
    turn = Turn(action=sample.action, observation=observation, prompt=sample.user_override)
    trajectory = sample.history.model_copy(update={"turns": [*sample.history.turns, turn]})
    turn_sample = TurnSample(trajectory=trajectory, turn_idx=len(trajectory.turns), id=sample.key)
    return {
        "prompt": messages,
        "observation": observation,
        "domain": sample.history.domain.value,
        "sample": turn_sample.model_dump_json(),
        "trajectory": group,
    }
