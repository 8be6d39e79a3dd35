"""AgentWorldBench records <-> :class:`~aw_lookahead.trajectory.TurnSample`, losslessly.

A record carries the whole trajectory as rendered chat messages (``prompt``,
``response``) plus the 1-based ``turn_idx`` of the target. Import keeps the
verbatim messages on each turn and recovers the action / observation beside
them; whatever does not fit our schema (a ``task`` with a prefix, unknown
keys, a ``current_prompt`` that differs from the listed one, string instead
of list, missing optional keys, unpaired turns) is kept under
``trajectory.metadata["agentworldbench"]`` so that export restores the same
JSON values.
"""

from __future__ import annotations

from typing import Any

from ._contract import (
    parse_user_turn,
    render_observation,
    render_user_turn,
    strip_observation_marker,
)
from .errors import TrajectoryError
from .trajectory import Domain, Trajectory, Turn, TurnSample

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


def awb_to_sample(
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


def sample_to_awb(sample: TurnSample, *, system_str: str | None = None) -> dict[str, Any]:
    """Export a sample as an AgentWorldBench record (inverse of :func:`awb_to_sample`)."""
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
            from .prompts import default_prompts

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
