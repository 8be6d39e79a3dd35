"""One trajectory schema for all seven domains, and its JSONL I/O.

A :class:`Trajectory` is what an agent did and saw: a domain, the task, an
optional initial state and the list of :class:`Turn` (action, observation).
A :class:`TurnSample` is one prediction problem: a trajectory plus the 1-based
index of the turn whose observation is the target; the turns before it are the
context. This module is the base layer: it knows no benchmark format and no
prompt; :mod:`aw_lookahead.agentworldbench` maps AgentWorldBench records to
``TurnSample`` and back.

Guarantees:

* Readers stream (constant memory per record) and report a bad record as a
  :class:`~aw_lookahead.errors.TrajectoryError` naming the file, the 1-based
  line and the offending field.
* :class:`JsonlWriter` writes each record with a single ``write`` on an
  ``O_APPEND`` descriptor, so a process killed mid-run leaves only whole lines.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._jsonl import (
    MAX_JSON_DEPTH,
    decode_jsonl_line,
    input_lines,
    jsonl_files,
    open_input,
    validate_record,
)
from .errors import TrajectoryError
from .redact import Redactor, default_redactor

_log = logging.getLogger("aw_lookahead")

__all__ = [
    "MAX_JSON_DEPTH",
    "Action",
    "Domain",
    "JsonlWriter",
    "Trajectory",
    "Turn",
    "TurnSample",
    "action_text",
    "canonical_arguments",
    "decode_jsonl_line",
    "iter_jsonl_dicts",
    "read_trajectories",
    "write_trajectories",
]

Action: TypeAlias = str | dict[str, Any] | list[Any]
"""An action: free text, or JSON (a tool call object, a keystroke list, ...)."""


class Domain(StrEnum):
    """The seven domains of the reference world model."""

    MCP = "mcp"
    SEARCH = "search"
    TERMINAL = "terminal"
    SWE = "swe"
    ANDROID = "android"
    WEB = "web"
    OS = "os"

    @classmethod
    def parse(cls, value: str | Domain) -> Domain:
        """Accept ``"terminal"``, ``"Terminal"`` or a benchmark task like ``"lwm/terminal"``."""
        if isinstance(value, Domain):
            return value
        key = str(value).strip().lower().rsplit("/", 1)[-1]
        try:
            return cls(key)
        except ValueError:
            valid = ", ".join(d.value for d in cls)
            raise TrajectoryError(
                f"unknown domain {value!r}; use one of: {valid}", field="domain"
            ) from None


def action_text(action: Action) -> str:
    """The canonical text of an action: JSON actions dumped deterministically."""
    if isinstance(action, str):
        return action
    return json.dumps(action, ensure_ascii=False)


def canonical_arguments(arguments: Any) -> str:
    """Canonical JSON of tool arguments: sorted keys, types kept (``1``, ``1.0``, ``true`` differ).

    Two calls are the same call only when this text is equal; it keys approvals and
    remembered decisions, never the world model's prompt (that keeps the call's own order).
    """
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class Turn(BaseModel):
    """One step: the action the agent took and the observation the environment returned.

    ``prompt`` / ``response`` hold the verbatim chat messages when the turn was
    imported already rendered (AgentWorldBench); the renderer then uses them
    as they are, so the model sees exactly what the benchmark sent.
    """

    model_config = ConfigDict(extra="forbid")

    action: Action
    observation: str
    prompt: str | None = None
    response: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Trajectory(BaseModel):
    """What an agent did and saw in one environment, in order."""

    model_config = ConfigDict(extra="forbid")

    domain: Domain
    task: str | None = None
    initial_state: str | None = None
    system_prompt: str | None = None
    tools: list[dict[str, Any]] | None = None
    turns: list[Turn] = Field(default_factory=list)
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("domain", mode="before")
    @classmethod
    def _parse_domain(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return Domain.parse(value)
            except TrajectoryError as exc:
                raise ValueError(str(exc).removeprefix("field 'domain': ")) from None
        return value

    def with_turn(self, action: Action, observation: str, **metadata: Any) -> Trajectory:
        """A copy with one more turn appended (the original is unchanged)."""
        turn = Turn(action=action, observation=observation, metadata=dict(metadata))
        return self.model_copy(update={"turns": [*self.turns, turn]})

    def prefix(self, n_turns: int) -> Trajectory:
        """A copy holding only the first ``n_turns`` turns."""
        return self.model_copy(update={"turns": list(self.turns[:n_turns])})

    def turn_samples(self) -> list[TurnSample]:
        """Expand into one sample per turn: each turn the target, earlier turns the context."""
        return [TurnSample(trajectory=self, turn_idx=i) for i in range(1, len(self.turns) + 1)]


class TurnSample(BaseModel):
    """One prediction problem: the target turn ``turn_idx`` (1-based) of ``trajectory``.

    The trajectory may hold turns after the target (AgentWorldBench records
    carry the whole trajectory); only the turns before it are context.
    """

    model_config = ConfigDict(extra="forbid")

    trajectory: Trajectory
    turn_idx: int = Field(ge=1)
    id: str | int | None = None

    @model_validator(mode="after")
    def _target_exists(self) -> TurnSample:
        if self.turn_idx > len(self.trajectory.turns):
            raise ValueError(
                f"turn_idx {self.turn_idx} is past the last turn "
                f"({len(self.trajectory.turns)} turns)"
            )
        return self

    @property
    def history(self) -> Trajectory:
        """The context: the trajectory cut before the target turn."""
        return self.trajectory.prefix(self.turn_idx - 1)

    @property
    def target(self) -> Turn:
        return self.trajectory.turns[self.turn_idx - 1]

    @property
    def action(self) -> Action:
        return self.target.action

    @property
    def observation(self) -> str:
        return self.target.observation

    @property
    def sample_id(self) -> str:
        """A stable id: the record's own, else the trajectory id and turn."""
        if self.id is not None:
            return str(self.id)
        return f"{self.trajectory.id or 'trajectory'}#{self.turn_idx}"


# --------------------------------------------------------------------------- JSONL I/O


def iter_jsonl_dicts(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; any bad line names file and line.

    Lines are decoded one by one (see :func:`decode_jsonl_line`), so invalid
    UTF-8 or binary data is reported at its own line.
    """
    p = Path(path)
    with open_input(p, what="JSONL file") as fh:
        for lineno, raw in enumerate(input_lines(fh, p, what="JSONL file"), start=1):
            if not raw.strip():
                continue
            obj = decode_jsonl_line(raw, source=str(p), line=lineno)
            if not isinstance(obj, dict):
                raise TrajectoryError(
                    f"expected a JSON object, got {type(obj).__name__}", source=str(p), line=lineno
                )
            yield lineno, obj


def read_trajectories(path: str | Path) -> Iterator[Trajectory]:
    """Stream trajectories (our schema) from a JSONL file or a folder of them."""
    for file in jsonl_files(path):
        for lineno, obj in iter_jsonl_dicts(file):
            yield validate_record(Trajectory, obj, str(file), lineno)


def _cut_torn_line(fd: int, path: Path) -> None:
    """Move a last line without its newline to ``<path>.torn`` and cut it off ``path``."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    end, chunk = size, 1 << 16
    cut = 0
    while end > 0:
        start = max(0, end - chunk)
        block = os.pread(fd, end - start, start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            cut = start + newline + 1
            break
        end = start
    fragment = os.pread(fd, size - cut, cut)
    side = path.with_name(path.name + ".torn")
    side_fd = os.open(side, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(side_fd, 0o600)
        os.write(side_fd, fragment + b"\n")
    finally:
        os.close(side_fd)
    os.ftruncate(fd, cut)
    _log.warning(
        "%s ended in a torn line (%d bytes, a writer died mid-line); it was moved to %s "
        "and the file now ends at its last complete line",
        path,
        len(fragment),
        side,
    )


class JsonlWriter:
    """Append-only JSONL writer: whole lines, and a torn last line repaired on the next open.

    Each record is serialised first, then written with one ``os.write`` on a
    descriptor opened with ``O_APPEND`` (looping only if the kernel reports a
    short write), so a process killed mid-write can leave at most its last line
    torn (Linux may stop a large write part way on a fatal signal). ``fsync=True``
    also forces each line to disk. Records pass through ``redactor`` (default:
    :func:`aw_lookahead.redact.default_redactor`) before they are written. The file
    is ``0600``, an existing one too.

    A file whose last line is torn (a process died mid-write) is repaired before
    appending: the partial line moves to ``<name>.torn`` (appended, ``0600``) and
    the file ends at its last complete line, so the next record is never glued
    onto a fragment and readers keep accepting the file. A WARNING names both.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = True,
        fsync: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND
        if not append:
            flags |= os.O_TRUNC
        self._fd: int | None = os.open(self.path, flags, 0o600)
        try:
            os.fchmod(self._fd, 0o600)
            if append:
                _cut_torn_line(self._fd, self.path)
        except BaseException:
            os.close(self._fd)
            raise
        self._fsync = fsync
        self._redactor = redactor or default_redactor()
        self.count = 0

    def write(self, record: BaseModel | dict[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"JsonlWriter for {self.path} is closed")
        if self._redactor.enabled:
            if isinstance(record, BaseModel):
                data = self._redactor.record(record.model_dump(mode="json"))
                text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            else:
                text = json.dumps(self._redactor.record(record), ensure_ascii=False)
        elif isinstance(record, BaseModel):
            text = record.model_dump_json(exclude_defaults=False)
        else:
            text = json.dumps(record, ensure_ascii=False)
        data = (text + "\n").encode("utf-8")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        if self._fsync:
            os.fsync(self._fd)
        self.count += 1

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_trajectories(
    path: str | Path, trajectories: Iterable[Trajectory], *, append: bool = False
) -> int:
    """Write trajectories as JSONL; returns how many were written."""
    with JsonlWriter(path, append=append) as w:
        for t in trajectories:
            w.write(t)
        return w.count
