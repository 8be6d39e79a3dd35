"""Prediction cache: identical (model, prompt, history, action, call index) costs no model call.

The key is a SHA-256 over the world model's ``model_id`` and the rendered
chat messages (system prompt, every history turn and the action's turn,
exactly what the model would see untrimmed, the called tool's definition
included in the compact MCP layout), each field length-prefixed. The messages
are the step's own rendering (:class:`~aw_lookahead.worldmodel.base.Step`),
made once per step and also sent to the server, so the key cannot drift from
the request. The history's part is chained turn by turn
(:mod:`aw_lookahead.prompts.history`), so a step's keys cost the same at
turn 500 as at turn 5; since every turn is in the key, ``ls`` at turn 9
never collapses into ``ls`` at turn 2. Keys carry a version: entries written
under an older key scheme simply miss.

Guarantees: an in-memory LRU of ``maxsize`` entries; with ``path`` an
append-only JSONL file that survives restarts and can be shared by several
processes:

* Every append runs under an exclusive ``flock`` on ``<path>.lock``, writes
  one whole line with a single ``write`` on an ``O_APPEND`` descriptor and
  takes the entry's offset from that write (the descriptor's position after
  it), never from an earlier ``seek``; so concurrent writers never lose or
  misplace each other's entries.
* A lookup that misses first reads whatever other processes appended since
  (and re-reads the whole index when the file was compacted or replaced), so
  an entry one process wrote is visible to every other.
* The file stays under ``max_bytes``: an append that crosses it compacts the
  file under the lock (one line per key, the newest entries kept up to half
  the bound) into a temporary file that atomically replaces it.
* Records are redacted (:mod:`aw_lookahead.redact`) before they are written;
  the files are created ``0600``. A torn, corrupt or over-long (8 MiB) line is skipped on load,
  never fatal.
* A file outlives the server it was filled from, and a served name can front
  other weights after a restart (another adapter for ``serve --local``, another
  LoRA under one vLLM name). So with a file the keys also name the served
  weights (:meth:`PredictionCache.scope`), learnt once per world model from
  ``/v1/models``; never per prediction, and never in memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import tempfile
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from aw_lookahead._jsonl import DEFAULT_MAX_LINE_MIB, lines_within
from aw_lookahead.errors import UsageError
from aw_lookahead.redact import redact_record
from aw_lookahead.trajectory import Action, Trajectory, action_text
from aw_lookahead.worldmodel.base import Prediction, Step, WorldModel

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PredictionCache",
    "call_index",
    "learn_served_model",
    "step_keys",
]

_ASK_S = 2.0  # how long a step waits to learn the served model; a slow server is left for later
logger = logging.getLogger("aw_lookahead")


async def learn_served_model(world_model: object, deadline: float) -> None:
    """Let ``world_model`` ask its server once which model and weights it serves
    (``resolve_model``, when it has one), for at most 2 s and never past ``deadline``
    (the loop's clock). Failures are left to the step's own call, which reports them."""
    resolve = getattr(world_model, "resolve_model", None)
    if callable(resolve):
        until = min(deadline, asyncio.get_running_loop().time() + _ASK_S)
        with contextlib.suppress(Exception):
            async with asyncio.timeout_at(until):
                await resolve()


def call_index(trajectory: Trajectory, action: Action) -> int:
    """How many turns of ``trajectory`` already hold exactly ``action``."""
    text = action_text(action)
    return sum(1 for t in trajectory.turns if action_text(t.action) == text)


def step_keys(model_id: str, step: Step) -> list[str]:
    """The cache key of each action of ``step``, from its rendering.

    The history's part is its chained key (:mod:`aw_lookahead.prompts.history`),
    which covers every rendered turn, so a step hashes only what is new: the
    model id and each action's last turn.
    """
    rendered = step.messages
    history = rendered.history_key
    if history is None:  # a rendering made without the incremental renderer
        digest = hashlib.sha256()
        for message in rendered.history:
            digest.update(_field(message["role"]) + _field(message["content"]))
        history = digest.hexdigest()
    base = hashlib.sha256(_KEY_VERSION + _field(model_id) + _field(history))
    keys: list[str] = []
    for last in rendered.last:
        one = base.copy()
        one.update(_field(last["role"]) + _field(last["content"]))
        keys.append(one.hexdigest())
    return keys


_KEY_VERSION = b"aw-lookahead cache v2\x00"


def _field(text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    return len(data).to_bytes(8, "big") + data


DEFAULT_MAX_BYTES = 256 * 1024 * 1024


class PredictionCache:
    """In-memory LRU of predictions, optionally backed by a shared append-only JSONL file."""

    def __init__(
        self,
        maxsize: int = 4096,
        path: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_bytes < 1024:
            raise UsageError(f"max_bytes must be at least 1024, got {max_bytes}")
        self.maxsize = maxsize
        self.path = Path(path) if path is not None else None
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._mem: OrderedDict[str, Prediction] = OrderedDict()
        self._disk: dict[str, int] = {}
        self._indexed = 0
        self._ident: tuple[int, int, bytes] | None = None
        self._warned: set[str] = set()
        if self.path is not None:
            self._refresh()

    async def scope(self, world_model: WorldModel, deadline: float) -> tuple[str, bool]:
        """What the keys of ``world_model``'s next step start with, and whether the file
        may answer them and keep them (``shared``; see :meth:`get`).

        In memory only, the ``model_id``: the process keeps talking to one server.
        With a file, a world model with ``served_weights`` (an
        :class:`~aw_lookahead.worldmodel.OpenAIWorldModel`: vLLM's ``root``,
        ``parent``, ``max_model_len``, see :meth:`~aw_lookahead.endpoint.ModelInfo.weights`)
        is asked for them first (:func:`learn_served_model`, once: it remembers the answer),
        and they join the ``model_id``; so entries of other weights behind the same name miss.
        A server that reports no weights (not vLLM) keeps the plain key, warned once: the
        file is what the user asked for, and nothing could tell its weights apart anyway.
        Weights not learnt (server down or slow) keep the step off the file, warned once: no
        entry of unknown weights is read or written; the next step asks again.
        A world model without ``served_weights`` is known by its ``model_id`` alone.
        """
        if self.path is None or not hasattr(world_model, "served_weights"):
            return world_model.model_id, True
        if getattr(world_model, "served_weights", None) is None:
            await learn_served_model(world_model, deadline)
        weights = getattr(world_model, "served_weights", None)
        model_id = world_model.model_id  # after asking: the model's name may be new
        if not isinstance(weights, str):
            self._warn_once(
                "unknown",
                f"could not learn which weights {model_id} serves: until it answers, steps "
                f"neither read nor write the prediction cache file {self.path}",
            )
            return model_id + "|weights=?", False
        if not weights:
            self._warn_once(
                "unreported",
                f"the server of {model_id} does not say which weights it serves: the "
                f"prediction cache file {self.path} cannot tell them apart; delete it after "
                "changing the weights behind that name",
            )
            return model_id, True
        return f"{model_id}|weights={weights}", True

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            logger.warning(message)

    # ------------------------------------------------------------------ disk index

    def _refresh(self) -> None:
        """Index what was appended since the last look; start over if the file was replaced."""
        assert self.path is not None
        try:
            fh = self.path.open("rb")
        except FileNotFoundError:
            self._disk.clear()
            self._indexed, self._ident = 0, None
            return
        with fh:
            st = os.fstat(fh.fileno())
            ident = (st.st_dev, st.st_ino, _head(fh))
            if ident != self._ident or st.st_size < self._indexed:
                self._disk.clear()
                self._indexed, self._ident = 0, ident
            fh.seek(self._indexed)
            offset = self._indexed
            for line in lines_within(fh, _MAX_LINE):
                if isinstance(line, int):  # a line too long to be ours: skipped
                    offset += line
                    continue
                if not line.endswith(b"\n"):
                    break
                key = _line_key(line)
                if key is not None:
                    self._disk[key] = offset
                offset += len(line)
            self._indexed = offset

    def _read_disk(self, key: str) -> Prediction | None:
        offset = self._disk.get(key)
        if offset is None or self.path is None:
            return None
        try:
            with self.path.open("rb") as fh:
                fh.seek(offset)
                record = json.loads(fh.readline(_MAX_LINE + 1))
            if record.get("key") != key:
                return None
            return Prediction.model_validate(record["prediction"])
        except (OSError, ValueError, KeyError, AttributeError):
            return None

    def _lookup_disk(self, key: str) -> Prediction | None:
        if self.path is None:
            return None
        stale = key in self._disk
        found = self._read_disk(key)
        if found is None:
            if stale:
                # The offset pointed at another line: the file changed under an index we trusted.
                self._ident = None
            self._refresh()
            found = self._read_disk(key)
        return found

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield
        finally:
            os.close(lock)

    # ------------------------------------------------------------------ public

    def __len__(self) -> int:
        return len(self._mem.keys() | self._disk.keys())

    def get(self, key: str, *, shared: bool = True) -> Prediction | None:
        """The cached prediction for ``key`` or ``None``; counts hits and misses.
        ``shared=False`` looks in memory only (see :meth:`scope`)."""
        found = self._mem.get(key)
        if found is not None:
            self._mem.move_to_end(key)
        elif shared:
            found = self._lookup_disk(key)
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

    def put(self, key: str, prediction: Prediction, *, shared: bool = True) -> None:
        """Store ``prediction``; appends one (redacted) line to the file when there is one
        and ``shared`` (see :meth:`scope`)."""
        self._remember(key, prediction)
        if not shared or self.path is None or key in self._disk:
            return
        record = redact_record({"key": key, "prediction": prediction.model_dump(mode="json")})
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        with self._locked():
            self._refresh()
            if key in self._disk:
                return
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.fchmod(fd, 0o600)  # predictions may quote secrets: private, an old file too
                size = os.fstat(fd).st_size
                # A writer that died mid-line left a torn tail: end it, so ours stays whole.
                torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
                view = memoryview(b"\n" + line if torn else line)
                while view:
                    view = view[os.write(fd, view) :]
                end = os.lseek(fd, 0, os.SEEK_CUR)
                st = os.fstat(fd)
                head = _head_at(fd)
            finally:
                os.close(fd)
            offset = end - len(line)
            self._disk[key] = offset
            if (st.st_dev, st.st_ino, head) == self._ident and offset == self._indexed:
                self._indexed = end
            if end > self.max_bytes:
                self._compact()

    def _compact(self) -> None:
        """Rewrite the file with one line per key, newest first kept, to half of ``max_bytes``.

        Runs under the lock; readers holding the old file keep reading it, and
        everyone re-indexes when they see the new inode.
        """
        assert self.path is not None
        newest: dict[str, bytes] = {}
        with self.path.open("rb") as fh:
            for line in lines_within(fh, _MAX_LINE):
                if isinstance(line, int) or not line.endswith(b"\n"):
                    continue
                key = _line_key(line)
                if key is not None:
                    newest.pop(key, None)
                    newest[key] = line
        kept: list[bytes] = []
        size = 0
        for line in reversed(newest.values()):
            if size + len(line) > self.max_bytes // 2:
                break
            kept.append(line)
            size += len(line)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.writelines(reversed(kept))
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        self._ident = None
        self._refresh()

    def clear(self) -> None:
        """Forget the in-memory entries (the file is left as it is)."""
        self._mem.clear()


_HEAD_BYTES = 512
_MAX_LINE = DEFAULT_MAX_LINE_MIB << 20
"""A cache line longer than this is not ours: skipped without being held in memory."""


def _head(fh: BinaryIO) -> bytes:
    """The file's first bytes: with the inode they tell a compacted file from the one it replaced.

    A filesystem may give the new file the inode of a deleted one; its first
    line is still new, because compaction always drops the oldest entries.
    """
    head = fh.read(_HEAD_BYTES)
    fh.seek(0)
    return head.split(b"\n", 1)[0]


def _head_at(fd: int) -> bytes:
    return os.pread(fd, _HEAD_BYTES, 0).split(b"\n", 1)[0]


def _line_key(line: bytes) -> str | None:
    try:
        key = json.loads(line)["key"]
    except (ValueError, KeyError, TypeError):
        return None
    return key if isinstance(key, str) else None
