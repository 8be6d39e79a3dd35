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

Guarantees: an in-memory LRU of ``maxsize`` entries; with ``path`` an SQLite
database (the standard library's :mod:`sqlite3`, write-ahead log) that survives
restarts and can be shared by several processes and threads:

* Every write is one transaction (``BEGIN IMMEDIATE``): a process killed at any
  moment leaves every entry it committed and nothing half-written, and
  concurrent writers wait for each other (up to 30 s) instead of losing entries.
* A lookup that misses in memory reads the database, so an entry one process
  committed is visible to every other at its next lookup.
* The database stays under ``max_bytes`` (at least 64 KiB): a write that takes
  it past the bound deletes the oldest entries, an eighth of the bound (at most
  1 MiB) more than it must, and gives the freed pages back to the file system
  in the same transaction. The write-ahead log is folded into it on a thread of
  its own every eighth of the bound (at most 4 MiB).
* Records are redacted (:mod:`aw_lookahead.redact`) before they are written;
  the files are created ``0600``. A record that no longer parses is a miss,
  and a database that cannot be read or written is a warning (once) and a
  miss, never a failed step. :meth:`PredictionCache.export_jsonl` writes the
  entries out as JSONL for reading. A file that is not such a database (the
  JSONL store of earlier builds, say) is refused at construction with a
  one-line error: it is only a cache, delete it.
* A file outlives the server it was filled from, and a served name can front
  other weights after a restart (another adapter for ``serve --local``, another
  LoRA under one vLLM name). So with a file the keys also name the served
  weights (:meth:`PredictionCache.scope`), learnt once per world model from
  ``/v1/models``; never per prediction, and never in memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import weakref
from collections import OrderedDict
from pathlib import Path

from pydantic import ValidationError

from aw_lookahead.errors import UsageError
from aw_lookahead.redact import redact_record
from aw_lookahead.trajectory import Action, JsonlWriter, Trajectory, action_text
from aw_lookahead.worldmodel.base import BaseWorldModel, Prediction, Step

from ._cache_store import close_in, fold_log, open_db, pragma, prune, transaction

__all__ = [
    "DEFAULT_MAX_BYTES",
    "PredictionCache",
    "call_index",
    "learn_served_model",
    "step_keys",
]

_ASK_S = 2.0  # how long a step waits to learn the served model; a slow server is left for later
logger = logging.getLogger("aw_lookahead")


async def learn_served_model(world_model: BaseWorldModel, deadline: float) -> None:
    """Let ``world_model`` ask its server which model and weights it serves
    (:meth:`~aw_lookahead.worldmodel.BaseWorldModel.resolve_model`, which asks once),
    for at most 2 s and never past ``deadline`` (the loop's clock). Failures are left
    to the step's own call, which reports them."""
    until = min(deadline, asyncio.get_running_loop().time() + _ASK_S)
    with contextlib.suppress(Exception):
        async with asyncio.timeout_at(until):
            await world_model.resolve_model()


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
MIN_MAX_BYTES = 64 * 1024  # an empty database is a few pages already


class PredictionCache:
    """In-memory LRU of predictions, optionally backed by a shared SQLite database.

    Safe to share between threads (one connection, used under a lock: an engine
    driven by ``*_sync`` runs its loop in a worker thread); a forked child opens
    its own connection.
    """

    def __init__(
        self,
        maxsize: int = 4096,
        path: str | os.PathLike[str] | None = None,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        if max_bytes < MIN_MAX_BYTES:
            raise UsageError(
                f"max_bytes must be at least {MIN_MAX_BYTES} (64 KiB), got {max_bytes}"
            )
        self.maxsize = maxsize
        self.path = Path(path) if path is not None else None
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._mem: OrderedDict[str, Prediction] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._folding: threading.Thread | None = None
        self._warned: set[str] = set()
        if self.path is not None:
            with self._lock:
                self._connect()

    async def scope(self, world_model: BaseWorldModel, deadline: float) -> tuple[str, bool]:
        """What the keys of ``world_model``'s next step start with, and whether the file
        may answer them and keep them (``shared``; see :meth:`get`).

        In memory only, the ``model_id``: the process keeps talking to one server.
        With a file, a world model with a server (``has_server``, an
        :class:`~aw_lookahead.worldmodel.OpenAIWorldModel`) is asked for the weights it
        serves (its ``served.weights``: vLLM's ``root``, ``parent``, ``max_model_len``, see
        :meth:`~aw_lookahead.endpoint.ModelInfo.weights`) first (:func:`learn_served_model`,
        once: it remembers the answer),
        and they join the ``model_id``; so entries of other weights behind the same name miss.
        A server that reports no weights (not vLLM) keeps the plain key, warned once: the
        file is what the user asked for, and nothing could tell its weights apart anyway.
        Weights not learnt (server down or slow) keep the step off the file, warned once: no
        entry of unknown weights is read or written; the next step asks again.
        A world model without a server is known by its ``model_id`` alone.
        """
        if self.path is None or not world_model.has_server:
            return world_model.model_id, True
        if world_model.served is None:
            await learn_served_model(world_model, deadline)
        served = world_model.served
        model_id = world_model.model_id  # after asking: the model's name may be new
        if served is None:
            self._warn_once(
                "unknown",
                f"could not learn which weights {model_id} serves: until it answers, steps "
                f"neither read nor write the prediction cache file {self.path}",
            )
            return model_id + "|weights=?", False
        if not served.weights:
            self._warn_once(
                "unreported",
                f"the server of {model_id} does not say which weights it serves: the "
                f"prediction cache file {self.path} cannot tell them apart; delete it after "
                "changing the weights behind that name",
            )
            return model_id, True
        return f"{model_id}|weights={served.weights}", True

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            logger.warning(message)

    # ------------------------------------------------------------------ public

    def __len__(self) -> int:
        """Entries in memory or in the file (reads every key of the file)."""
        with self._lock:
            keys = set(self._mem)
            if self.path is not None:
                with contextlib.suppress(sqlite3.Error):
                    keys.update(
                        k for (k,) in self._connect().execute("SELECT key FROM predictions")
                    )
            return len(keys)

    def get(self, key: str, *, shared: bool = True) -> Prediction | None:
        """The cached prediction for ``key`` or ``None``; counts hits and misses.
        ``shared=False`` looks in memory only (see :meth:`scope`)."""
        with self._lock:
            found = self._mem.get(key)
            if found is not None:
                self._mem.move_to_end(key)
            elif shared and self.path is not None:
                found = self._load(key)
                if found is not None:
                    self._remember(key, found)
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
            return found

    def put(self, key: str, prediction: Prediction, *, shared: bool = True) -> None:
        """Store ``prediction``; writes it (redacted) to the file, in one transaction, when
        there is one and ``shared`` (see :meth:`scope`). A key the file holds keeps its entry."""
        with self._lock:
            self._remember(key, prediction)
            if not shared or self.path is None or self._stored(key):
                return
        record = redact_record({"key": key, "prediction": prediction.model_dump(mode="json")})
        text = json.dumps(record["prediction"], ensure_ascii=False)
        with self._lock:
            try:
                db = self._connect()
                with transaction(db):
                    added = db.execute(
                        "INSERT OR IGNORE INTO predictions (key, prediction) VALUES (?, ?)",
                        (key, text),
                    ).rowcount
                    if (
                        added
                        and pragma(db, "page_count") * pragma(db, "page_size") > self.max_bytes
                    ):
                        prune(db, self.max_bytes)
                self._fold_log_soon()
            except sqlite3.Error as exc:
                self._warn_once(
                    "write",
                    f"could not write to the prediction cache {self.path} ({exc}): its "
                    "predictions stay in memory only",
                )

    def clear(self) -> None:
        """Forget the in-memory entries (the file is left as it is)."""
        with self._lock:
            self._mem.clear()

    def close(self) -> None:
        """Close the file's database connection (after a log fold under way; the last
        connection to leave folds the log in and removes it); the next lookup or write
        opens it again."""
        if self._folding is not None:
            self._folding.join()
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def export_jsonl(self, out: str | Path) -> int:
        """Write the file's entries to ``out``, oldest first, one JSON line each
        (``{"key": ..., "prediction": {...}}``, redacted as stored; the file ``0600``,
        replaced if it exists), and return how many. Entries kept in memory only
        (``shared=False``) are not in the file."""
        if self.path is None:
            raise UsageError("this prediction cache has no file to export: make it with path=")
        count = 0
        with self._lock, JsonlWriter(out, append=False) as writer:
            rows = self._connect().execute("SELECT key, prediction FROM predictions ORDER BY seq")
            for key, text in rows:
                writer.write({"key": key, "prediction": json.loads(text)})
                count += 1
        return count

    # ------------------------------------------------------------------ database

    def _remember(self, key: str, prediction: Prediction) -> None:
        self._mem[key] = prediction
        self._mem.move_to_end(key)
        while len(self._mem) > self.maxsize:
            self._mem.popitem(last=False)

    def _connect(self) -> sqlite3.Connection:
        """This process's connection (called under the lock), opened on first use.

        A connection inherited over ``fork`` is left alone (SQLite forbids using it
        in the child); the child opens its own.
        """
        assert self.path is not None
        if self._db is None or self._pid != os.getpid():
            self._db = open_db(self.path, self.max_bytes)
            self._pid = os.getpid()
            weakref.finalize(self, close_in, self._db, self._pid)
        return self._db

    def _fold_log_soon(self) -> None:
        """Past an eighth of the bound (at most 4 MiB), fold the write-ahead log into the
        database on a thread of its own (a checkpoint ends in an fsync, tens of ms):
        the writer, maybe an event loop, never waits for it."""
        assert self.path is not None
        try:
            size = os.stat(f"{self.path}-wal").st_size
        except OSError:
            return
        busy = self._folding is not None and self._folding.is_alive()
        if size > min(self.max_bytes // 8, 4 << 20) and not busy:
            self._folding = threading.Thread(target=fold_log, args=(self.path,), daemon=True)
            self._folding.start()

    def _load(self, key: str) -> Prediction | None:
        try:
            row = (
                self._connect()
                .execute("SELECT prediction FROM predictions WHERE key = ?", (key,))
                .fetchone()
            )
        except sqlite3.Error as exc:
            self._warn_once(
                "read", f"could not read the prediction cache {self.path} ({exc}): lookups miss"
            )
            return None
        if row is None:
            return None
        try:
            return Prediction.model_validate_json(row[0])
        except ValidationError:
            return None

    def _stored(self, key: str) -> bool:
        """Whether the file holds ``key`` already (then ``put`` skips the redaction)."""
        try:
            return (
                self._connect()
                .execute("SELECT 1 FROM predictions WHERE key = ?", (key,))
                .fetchone()
                is not None
            )
        except sqlite3.Error:
            return False
