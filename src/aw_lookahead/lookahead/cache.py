"""Prediction cache: identical (model, prompt, history, action, call index) costs no model call.

The key is a SHA-256 over the world model's ``model_id``, the rendered chat
messages (system prompt, history and the action's turn, exactly what the
model would see) and the *call index*: how many identical actions the history
already holds. The call index keeps ``ls`` at turn 9 apart from ``ls`` at
turn 2 even if a renderer ever dropped old turns, so a repeated call is
simulated afresh rather than collapsed into the first one.

Guarantees: an in-memory LRU of ``maxsize`` entries; with ``path`` an
append-only JSONL file (one whole line per entry, written with a single
``write`` on an ``O_APPEND`` descriptor) that survives restarts. A torn or
corrupt line is skipped on load, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from aw_lookahead._contract import render_user_turn
from aw_lookahead.prompts import PromptSet, history_messages
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel.base import Prediction

__all__ = ["PredictionCache", "StepKeys", "call_index"]


def call_index(trajectory: Trajectory, action: Action) -> int:
    """How many turns of ``trajectory`` already hold exactly ``action``."""
    text = action_text(action)
    return sum(1 for t in trajectory.turns if action_text(t.action) == text)


class StepKeys:
    """Cache keys for the candidates of one step; the history is rendered and hashed once."""

    def __init__(self, model_id: str, trajectory: Trajectory, prompts: PromptSet | None = None):
        self._trajectory = trajectory
        digest = hashlib.sha256(model_id.encode())
        # The compact MCP layout puts a called tool's definition into the action's own turn,
        # which the key below does not render: hash the definitions here instead.
        tools = json.dumps(trajectory.tools, sort_keys=True, ensure_ascii=False)
        digest.update(b"\x00tools\x00" + tools.encode())
        for message in history_messages(trajectory, prompts=prompts):
            digest.update(b"\x00" + message["role"].encode() + b"\x00")
            digest.update(message["content"].encode())
        self._prefix = digest
        self._texts = [action_text(t.action) for t in trajectory.turns]

    def key(self, action: Action) -> str:
        """The key of ``action`` after this step's history."""
        traj = self._trajectory
        first = not traj.turns
        last = render_user_turn(
            len(traj.turns) + 1,
            action,
            task=traj.task if first else None,
            state=traj.initial_state if first else None,
        )
        text = action_text(action)
        index = self._texts.count(text)
        digest = self._prefix.copy()
        digest.update(b"\x00user\x00" + last.encode() + f"\x00#{index}".encode())
        return digest.hexdigest()


class PredictionCache:
    """In-memory LRU of predictions, optionally backed by an append-only JSONL file."""

    def __init__(self, maxsize: int = 4096, path: str | os.PathLike[str] | None = None) -> None:
        self.maxsize = maxsize
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        self._mem: OrderedDict[str, Prediction] = OrderedDict()
        self._disk: dict[str, int] = {}
        if self.path is not None:
            self._load_index()

    def _load_index(self) -> None:
        assert self.path is not None
        if not self.path.exists():
            return
        with self.path.open("rb") as fh:
            offset = 0
            for line in fh:
                if line.endswith(b"\n"):
                    try:
                        key = json.loads(line)["key"]
                    except (ValueError, KeyError, TypeError):
                        key = None
                    if isinstance(key, str):
                        self._disk[key] = offset
                offset += len(line)

    def __len__(self) -> int:
        return len(self._mem.keys() | self._disk.keys())

    def _read_disk(self, key: str) -> Prediction | None:
        offset = self._disk.get(key)
        if offset is None or self.path is None:
            return None
        try:
            with self.path.open("rb") as fh:
                fh.seek(offset)
                record = json.loads(fh.readline())
            if record.get("key") != key:
                return None
            return Prediction.model_validate(record["prediction"])
        except (OSError, ValueError, KeyError, AttributeError):
            return None

    def get(self, key: str) -> Prediction | None:
        """The cached prediction for ``key`` or ``None``; counts hits and misses."""
        found = self._mem.get(key)
        if found is not None:
            self._mem.move_to_end(key)
        else:
            found = self._read_disk(key)
            if found is not None:
                self._remember(key, found)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def _remember(self, key: str, prediction: Prediction) -> None:
        self._mem[key] = prediction
        self._mem.move_to_end(key)
        while len(self._mem) > self.maxsize:
            self._mem.popitem(last=False)

    def put(self, key: str, prediction: Prediction) -> None:
        """Store ``prediction``; appends one line to the file when there is one."""
        self._remember(key, prediction)
        if self.path is None or key in self._disk:
            return
        record: dict[str, Any] = {"key": key, "prediction": prediction.model_dump(mode="json")}
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            offset = os.lseek(fd, 0, os.SEEK_END)
            os.write(fd, line)
        finally:
            os.close(fd)
        self._disk[key] = offset

    def clear(self) -> None:
        """Forget the in-memory entries (the file is left as it is)."""
        self._mem.clear()


def keys_for(
    model_id: str, trajectory: Trajectory, actions: Sequence[Action], prompts: PromptSet | None
) -> list[str]:
    """Cache keys for ``actions`` after ``trajectory`` (see :class:`StepKeys`)."""
    step = StepKeys(model_id, trajectory, prompts)
    return [step.key(a) for a in actions]
