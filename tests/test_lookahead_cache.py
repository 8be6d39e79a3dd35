"""The on-disk prediction cache shared by real processes: transactions, visibility, bounds."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from aw_lookahead.errors import UsageError
from aw_lookahead.lookahead.cache import MIN_MAX_BYTES, PredictionCache
from aw_lookahead.worldmodel.base import Prediction

_WRITER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from aw_lookahead.lookahead.cache import PredictionCache
    from aw_lookahead.worldmodel.base import Prediction

    path, me, others, n, max_bytes = sys.argv[1:6]
    n, max_bytes, others = int(n), int(max_bytes), others.split(",")
    go = Path(path).with_name("go")
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    cache = PredictionCache(maxsize=max(n, 1), path=path, max_bytes=max_bytes)
    i = 0
    while n < 0 or i < n:  # n < 0: until killed
        cache.put(f"{me}-{i}", Prediction(action=f"echo {me} {i}", observation=f"{me} {i}"))
        print(f"{me}-{i}", flush=True)  # acknowledged: put returned
        i += 1
    Path(path).with_name(f"done-{me}").touch()
    for other in others:
        while not Path(path).with_name(f"done-{other}").exists() and time.monotonic() < deadline:
            time.sleep(0.005)
    cache.clear()
    found = {}
    for name in (me, *others):
        for i in range(n):
            hit = cache.get(f"{name}-{i}")
            found[f"{name}-{i}"] = hit.observation if hit is not None else None
    print(json.dumps(found))
    """
)
NAMES = "abcd"


def _writer(path: Path, me: str, n: int, max_bytes: int) -> subprocess.Popen[str]:
    others = ",".join(name for name in NAMES if name != me)
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(path), me, others, str(n), str(max_bytes)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )


def _four_writers(path: Path, n: int, max_bytes: int) -> list[dict[str, str | None]]:
    procs = [_writer(path, me, n, max_bytes) for me in NAMES]
    (path.parent / "go").touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(json.loads(out.splitlines()[-1]))
    return results


def _rows(path: Path) -> list[tuple[str, str]]:
    db = sqlite3.connect(path)
    try:
        return db.execute("SELECT key, prediction FROM predictions ORDER BY seq").fetchall()
    finally:
        db.close()


def test_four_processes_writing_see_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    results = _four_writers(path, 200, 64 * 1024 * 1024)
    expected = {f"{name}-{i}": f"{name} {i}" for name in NAMES for i in range(200)}
    for found in results:
        assert found == expected
    reopened = PredictionCache(path=path)
    assert len(reopened) == 800
    rows = _rows(path)
    assert len(rows) == 800
    assert {key: json.loads(p)["observation"] for key, p in rows} == expected
    assert path.stat().st_mode & 0o777 == 0o600


def test_four_processes_with_pruning_keep_the_file_bounded(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    max_bytes = MIN_MAX_BYTES
    results = _four_writers(path, 400, max_bytes)
    assert path.stat().st_size <= max_bytes  # the last to leave folded the log in
    keys = [key for key, _ in _rows(path)]
    assert len(keys) == len(set(keys)) > 0
    assert len(keys) < 1600
    for found in results:
        # What survived the last pruning is readable by all, and nothing is mixed up.
        assert all(found[k] == k.replace("-", " ") for k in keys)
        assert all(v is None or v == k.replace("-", " ") for k, v in found.items())


def test_writers_killed_mid_write_lose_nothing_they_were_told_was_stored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "cache.db"
    procs = {me: _writer(path, me, -1, 64 * 1024 * 1024) for me in NAMES}
    acked: dict[str, list[str]] = {}
    try:
        (path.parent / "go").touch()
        for i, (me, proc) in enumerate(procs.items()):
            assert proc.stdout is not None
            acked[me] = [proc.stdout.readline().strip() for _ in range(50 + 25 * i)]
    finally:
        for proc in procs.values():  # all four still writing when they die
            proc.send_signal(signal.SIGKILL)
    for me, proc in procs.items():
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, err
        acked[me] += out.split()  # acknowledged after we stopped reading

    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        db.close()
    fresh = PredictionCache(path=path)
    for keys in acked.values():
        for key in keys:
            hit = fresh.get(key)
            assert hit is not None, key
            assert hit.observation == key.replace("-", " ")
    fresh.put("after", Prediction(action="a", observation="still writable"))
    assert PredictionCache(path=path).get("after") is not None


def test_pruning_keeps_newest_and_bounds_size(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    wal = path.with_name("cache.db-wal")
    max_bytes = MIN_MAX_BYTES
    cache = PredictionCache(path=path, max_bytes=max_bytes)
    for i in range(400):
        cache.put(f"k{i}", Prediction(action=f"echo {i}", observation=f"out {i} " + "x" * 300))
        assert path.stat().st_size <= max_bytes
    cache.close()
    assert not wal.exists()  # folded in
    assert path.stat().st_size <= max_bytes
    fresh = PredictionCache(path=path, max_bytes=max_bytes)
    assert fresh.get("k399") is not None
    assert fresh.get("k0") is None
    assert 0 < len(fresh) < 400


def test_an_entry_larger_than_half_the_bound_is_not_kept_on_file(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    cache = PredictionCache(path=path, max_bytes=MIN_MAX_BYTES)
    cache.put("big", Prediction(action="a", observation="y" * MIN_MAX_BYTES))
    assert path.stat().st_size <= MIN_MAX_BYTES
    assert PredictionCache(path=path).get("big") is None
    assert cache.get("big") is not None  # memory still has it


def test_cache_records_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    secret = "sk-proj-" + "Zx9" * 10
    cache = PredictionCache(path=path)
    cache.put("k", Prediction(action=f"curl -H 'x: {secret}'", observation=f"key {secret}"))
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())  # the database, its log
    assert secret.encode() not in on_disk
    assert cache.export_jsonl(tmp_path / "out.jsonl") == 1
    text = (tmp_path / "out.jsonl").read_text()
    assert secret not in text
    assert "[REDACTED_OPENAI_KEY_" in text


def test_export_writes_every_entry_oldest_first(tmp_path: Path) -> None:
    cache = PredictionCache(path=tmp_path / "cache.db")
    for i in range(3):
        cache.put(f"k{i}", Prediction(action=f"echo {i}", observation=f"out {i}"))
    cache.put("mem", Prediction(action="m", observation="m"), shared=False)
    out = tmp_path / "export" / "preds.jsonl"
    assert cache.export_jsonl(out) == 3
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["key"] for r in records] == ["k0", "k1", "k2"]
    assert Prediction.model_validate(records[2]["prediction"]).observation == "out 2"
    assert out.stat().st_mode & 0o777 == 0o600
    with pytest.raises(UsageError, match="no file to export"):
        PredictionCache().export_jsonl(out)


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = PredictionCache(maxsize=8, path=tmp_path / "cache.db")
    errors: list[BaseException] = []

    def work(me: int) -> None:
        try:
            for i in range(50):
                cache.put(f"{me}-{i}", Prediction(action="a", observation=f"{me} {i}"))
                assert cache.get(f"{me}-{i // 2}") is not None
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(me,)) for me in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(PredictionCache(path=tmp_path / "cache.db")) == 200


def test_a_jsonl_cache_of_earlier_builds_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"key": "k", "prediction": {"action": "a", "observation": "o"}}\n')
    with pytest.raises(UsageError, match="not a prediction cache database") as info:
        PredictionCache(path=path)
    assert str(path) in str(info.value)
    assert "JSONL" in str(info.value)
    assert "\n" not in str(info.value)
    (tmp_path / "junk").write_bytes(b"\x00" * 100)
    with pytest.raises(UsageError, match="delete it"):
        PredictionCache(path=tmp_path / "junk")


def test_max_bytes_must_be_sensible() -> None:
    with pytest.raises(UsageError, match="max_bytes"):
        PredictionCache(max_bytes=10)


def test_an_existing_cache_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "cache.db"
    path.write_text("")
    path.chmod(0o644)
    PredictionCache(path=path).put("k", Prediction(action="a", observation="one"))
    assert (path.stat().st_mode & 0o777) == 0o600
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in tmp_path.iterdir())
