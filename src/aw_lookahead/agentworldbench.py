"""The AgentWorldBench format: records <-> :class:`~aw_lookahead.trajectory.TurnSample`, losslessly.

A record carries the whole trajectory as rendered chat messages (``prompt``,
``response``) plus the 1-based ``turn_idx`` of the target. Import keeps the
verbatim messages on each turn and recovers the action / observation beside
them; whatever does not fit our schema (a ``task`` with a prefix, unknown
keys, a ``current_prompt`` that differs from the listed one, string instead
of list, missing optional keys, unpaired turns) is kept under
``trajectory.metadata["agentworldbench"]`` so that export restores the same
JSON values: reading a record and writing it back yields the same JSON.

* :func:`record_to_sample` / :func:`sample_to_record` - one record.
* :func:`read_agentworldbench` / :func:`write_agentworldbench` - JSONL files.
* :func:`load_turn_samples` - a file or folder in either format (benchmark
  records or our trajectories), detected per record by :func:`parse_record`.

This module sits above :mod:`aw_lookahead.trajectory` (the schema) and
:mod:`aw_lookahead.prompts` (the default system prompt of an export); neither
imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ._jsonl import jsonl_files, validate_record
from .errors import TrajectoryError
from .prompts import default_prompts
from .prompts.contract import (
    parse_user_turn,
    render_observation,
    render_user_turn,
    strip_observation_marker,
)
from .trajectory import Domain, JsonlWriter, Trajectory, Turn, TurnSample, iter_jsonl_dicts

__all__ = [
    "KNOWN_FIELDS",
    "META_KEY",
    "load_turn_samples",
    "parse_record",
    "read_agentworldbench",
    "record_to_sample",
    "sample_to_record",
    "write_agentworldbench",
]

KNOWN_FIELDS = (
    "task",
    "id",
    "prompt",
    "response",
    "current_prompt",
    "system_str",
    "turn_idx",
    "total_turns",
)
META_KEY = "agentworldbench"


def _str_list(
    record: dict[str, Any], key: str, meta: dict[str, Any], source: str | None, line: int | None
) -> list[str]:
    value = record.get(key)
    if value is None:
        raise TrajectoryError(
            "missing; an AgentWorldBench record needs 'prompt' and 'response' lists",
            source=source,
            line=line,
            field=key,
        )
    if isinstance(value, str):
        meta[f"{key}_is_str"] = True
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TrajectoryError(
            "must be a list of strings (one entry per turn)", source=source, line=line, field=key
        )
    return list(value)


def record_to_sample(
    record: dict[str, Any], *, source: str | None = None, line: int | None = None
) -> TurnSample:
    """Import one AgentWorldBench record; errors name the record's file, line and field."""

    def fail(message: str, field: str) -> TrajectoryError:
        return TrajectoryError(message, source=source, line=line, field=field)

    meta: dict[str, Any] = {}
    task = record.get("task")
    if not isinstance(task, str):
        raise fail("missing or not a string; expected a domain such as 'terminal'", "task")
    try:
        domain = Domain.parse(task)
    except TrajectoryError as exc:
        raise fail(str(exc).removeprefix("field 'domain': "), "task") from None
    if task != domain.value:
        meta["task"] = task

    prompts = _str_list(record, "prompt", meta, source, line)
    responses = _str_list(record, "response", meta, source, line)
    n = min(len(prompts), len(responses))
    if len(prompts) > n:
        meta["extra_prompts"] = prompts[n:]
    if len(responses) > n:
        meta["extra_responses"] = responses[n:]

    turn_idx = record.get("turn_idx")
    if not isinstance(turn_idx, int) or isinstance(turn_idx, bool) or turn_idx < 1:
        raise fail(f"must be a 1-based integer, got {turn_idx!r}", "turn_idx")
    if turn_idx > n:
        raise fail(
            f"turn {turn_idx} has no ground-truth observation: 'response' has {len(responses)} "
            f"entries and 'prompt' {len(prompts)}",
            "turn_idx",
        )

    turns: list[Turn] = []
    task_text: str | None = None
    state: str | None = None
    for j in range(n):
        parsed = parse_user_turn(prompts[j])
        if j == 0:
            task_text, state = parsed.task, parsed.state
        turns.append(
            Turn(
                action=parsed.action,
                observation=strip_observation_marker(responses[j]),
                prompt=prompts[j],
                response=responses[j],
            )
        )

    if "current_prompt" not in record:
        meta["no_current_prompt"] = True
    elif record["current_prompt"] != prompts[turn_idx - 1]:
        meta["current_prompt"] = record["current_prompt"]

    system = record.get("system_str")
    if "system_str" not in record:
        meta["no_system_str"] = True
    elif not isinstance(system, str):
        raise fail("must be a string", "system_str")

    if "total_turns" not in record:
        meta["no_total_turns"] = True
    elif record["total_turns"] != n:
        meta["total_turns"] = record["total_turns"]

    if "id" not in record:
        meta["no_id"] = True
    rid = record.get("id")
    if rid is not None and not isinstance(rid, str | int):
        raise fail("must be a string or an integer", "id")

    extra = {k: v for k, v in record.items() if k not in KNOWN_FIELDS}
    if extra:
        meta["extra"] = extra
    traj = Trajectory(
        domain=domain,
        task=task_text,
        initial_state=state,
        system_prompt=system,
        turns=turns,
        metadata={META_KEY: meta} if meta else {},
    )
    return TurnSample(trajectory=traj, turn_idx=turn_idx, id=rid)


def sample_to_record(sample: TurnSample, *, system_str: str | None = None) -> dict[str, Any]:
    """Export a sample as an AgentWorldBench record (the inverse of :func:`record_to_sample`).

    ``system_str`` defaults to the trajectory's system prompt, else our
    prompt for its domain.
    """
    traj = sample.trajectory
    meta: dict[str, Any] = dict(traj.metadata.get(META_KEY, {}))
    prompts: list[str] = []
    responses: list[str] = []
    for j, turn in enumerate(traj.turns):
        first = j == 0
        prompts.append(
            turn.prompt
            if turn.prompt is not None
            else render_user_turn(
                j + 1,
                turn.action,
                task=traj.task if first else None,
                state=traj.initial_state if first else None,
            )
        )
        responses.append(
            turn.response if turn.response is not None else render_observation(turn.observation)
        )
    prompts += meta.get("extra_prompts", [])
    responses += meta.get("extra_responses", [])

    if system_str is None:
        if traj.system_prompt is not None:
            system_str = traj.system_prompt
        else:
            # The record's turns carry no tool definitions, so its system prompt holds them all.
            system_str = default_prompts().system(traj.domain, tools=traj.tools, layout="full")

    record: dict[str, Any] = {"task": meta.get("task", traj.domain.value)}
    if not meta.get("no_id"):
        record["id"] = sample.id if sample.id is not None else sample.sample_id
    record["prompt"] = prompts[0] if meta.get("prompt_is_str") and len(prompts) == 1 else prompts
    record["response"] = (
        responses[0] if meta.get("response_is_str") and len(responses) == 1 else responses
    )
    if not meta.get("no_current_prompt"):
        record["current_prompt"] = meta.get("current_prompt", prompts[sample.turn_idx - 1])
    if not meta.get("no_system_str"):
        record["system_str"] = system_str
    record["turn_idx"] = sample.turn_idx
    if not meta.get("no_total_turns"):
        record["total_turns"] = meta.get("total_turns", len(traj.turns))
    record.update(meta.get("extra", {}))
    return record


def parse_record(obj: dict[str, Any], *, source: str, line: int) -> Trajectory | TurnSample | None:
    """One JSONL object in either format: a trajectory (``turns``), a benchmark sample
    (``prompt``/``response``), or None when it is neither (the caller words that error)."""
    if "turns" in obj:
        return validate_record(Trajectory, obj, source, line)
    if "prompt" in obj or "response" in obj:
        return record_to_sample(obj, source=source, line=line)
    return None


def read_agentworldbench(path: str | Path) -> Iterator[TurnSample]:
    """Stream AgentWorldBench records (a ``*_test.jsonl`` file or their folder) as samples."""
    for file in jsonl_files(path):
        for lineno, obj in iter_jsonl_dicts(file):
            yield record_to_sample(obj, source=str(file), line=lineno)


def load_turn_samples(path: str | Path, *, pattern: str = "*.jsonl") -> Iterator[TurnSample]:
    """Stream samples from either format, detected per record.

    AgentWorldBench records (``prompt``/``response``) give one sample each;
    trajectories in our schema (``turns``) expand into one sample per turn.
    A folder is read as its files matching ``pattern``.
    """
    for file in jsonl_files(path, pattern):
        for lineno, obj in iter_jsonl_dicts(file):
            record = parse_record(obj, source=str(file), line=lineno)
            if isinstance(record, Trajectory):
                yield from record.turn_samples()
            elif record is not None:
                yield record
            else:
                raise TrajectoryError(
                    "neither a trajectory (needs 'turns') nor an AgentWorldBench record "
                    "(needs 'prompt' and 'response')",
                    source=str(file),
                    line=lineno,
                )


def write_agentworldbench(
    path: str | Path, samples: Iterable[TurnSample], *, append: bool = False
) -> int:
    """Write samples as AgentWorldBench JSONL records; returns how many were written."""
    with JsonlWriter(path, append=append) as w:
        for s in samples:
            w.write(sample_to_record(s))
        return w.count
