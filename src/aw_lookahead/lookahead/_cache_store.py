"""The SQLite file under :class:`~aw_lookahead.lookahead.cache.PredictionCache`: opening
it (created ``0600``, write-ahead log, refused in one line when it is something else),
one-transaction writes, pruning past the bound and folding the log in off the writer's
thread. Plain functions on a connection; the cache holds the connection and its lock."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from aw_lookahead.errors import UsageError

__all__ = ["close_in", "fold_log", "open_db", "pragma", "prune", "transaction"]

_BUSY_S = 30.0  # how long a write waits for another process's transaction
_SCHEMA = 1  # PRAGMA user_version of the layout below
_MAGIC = b"SQLite format 3\x00"

_CREATE = """
CREATE TABLE predictions (
    seq INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    prediction TEXT NOT NULL
)
"""


def open_db(path: Path, max_bytes: int) -> sqlite3.Connection:
    """Open (creating it ``0600`` if need be) the cache database at ``path``.

    Anything at ``path`` that is not an SQLite database of this layout is a
    :class:`~aw_lookahead.errors.UsageError` naming it, never a traceback.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)  # predictions may quote secrets: private, an old file too
        head = os.pread(fd, len(_MAGIC), 0)
    finally:
        os.close(fd)
    if head and head != _MAGIC:
        was = " (the JSONL cache of earlier builds?)" if head.startswith(b"{") else ""
        raise UsageError(
            f"{path} is not a prediction cache database{was}: it only saves model calls, "
            "so delete it or pass another path"
        )
    db = sqlite3.connect(path, timeout=_BUSY_S, isolation_level=None, check_same_thread=False)
    try:
        # Pages freed by pruning go back to the file system at commit (on a new database).
        db.execute("PRAGMA auto_vacuum = FULL")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")  # WAL: a crash never tears a transaction
        with transaction(db):
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                db.execute(_CREATE)
                db.execute(f"PRAGMA user_version = {_SCHEMA}")
            elif version != _SCHEMA:
                raise UsageError(
                    f"{path} is a prediction cache of another layout (version {version}, "
                    f"this build reads {_SCHEMA}): delete it or pass another path"
                )
        db.execute("PRAGMA wal_autocheckpoint = 0")  # folded on a thread: fold_log
        db.execute(f"PRAGMA journal_size_limit = {max_bytes // 8}")
    except sqlite3.Error as exc:
        db.close()
        raise UsageError(
            f"{path}: cannot open it as a prediction cache ({exc}): delete it or pass another path"
        ) from exc
    except BaseException:
        db.close()
        raise
    return db


def fold_log(path: Path) -> None:
    """Checkpoint the write-ahead log of ``path`` (``PASSIVE``: it waits for nobody and
    nobody waits for it; the next writer then starts the log over, cut short)."""
    with contextlib.suppress(sqlite3.Error):
        db = sqlite3.connect(path, timeout=_BUSY_S)
        try:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        finally:
            db.close()


def close_in(db: sqlite3.Connection, pid: int) -> None:
    if os.getpid() == pid:
        db.close()


@contextlib.contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: the write lock taken up front, all or nothing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise


def pragma(db: sqlite3.Connection, name: str) -> int:
    return int(db.execute(f"PRAGMA {name}").fetchone()[0])


_SIZE = "length(CAST(key AS BLOB)) + length(CAST(prediction AS BLOB))"


def prune(db: sqlite3.Connection, max_bytes: int) -> None:
    """Delete the oldest entries until the database's pages fit in ``max_bytes`` less a
    margin (an eighth of it, at most 1 MiB), so pruning runs once per margin written and
    each run moves about a margin's worth of pages: a short write, never a rewrite of the
    whole file. An entry larger than the bound goes too. Runs in the writer's transaction,
    whose commit gives the freed pages back to the file system (``auto_vacuum``)."""
    page = pragma(db, "page_size")
    target = max_bytes - min(max_bytes // 8, 1 << 20)
    while (excess := (pragma(db, "page_count") - pragma(db, "freelist_count")) * page - target) > 0:
        freed, last = 0, None
        for seq, size in db.execute(f"SELECT seq, {_SIZE} FROM predictions ORDER BY seq"):
            freed, last = freed + size, seq
            if freed >= excess:
                break
        if last is None:
            return
        db.execute("DELETE FROM predictions WHERE seq <= ?", (last,))
