"""The on-disk prediction cache shared by real processes: locking, visibility, compaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aw_lookahead.errors import UsageError
from aw_lookahead.lookahead.cache import PredictionCache
from aw_lookahead.worldmodel.base import Prediction

_WRITER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from aw_lookahead.lookahead.cache import PredictionCache
    from aw_lookahead.worldmodel.base import Prediction

    path, me, other, n, max_bytes = sys.argv[1:6]
    n, max_bytes = int(n), int(max_bytes)
    go = Path(path).with_name("go")
    deadline = time.monotonic() + 120
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    cache = PredictionCache(maxsize=n, path=path, max_bytes=max_bytes)
    for i in range(n):
        cache.put(f"{me}-{i}", Prediction(action=f"echo {me} {i}", observation=f"{me} {i}"))
    Path(path).with_name(f"done-{me}").touch()
    while not Path(path).with_name(f"done-{other}").exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    cache.clear()
    found = {}
    for name in (me, other):
        for i in range(n):
            hit = cache.get(f"{name}-{i}")
            found[f"{name}-{i}"] = hit.observation if hit is not None else None
    print(json.dumps(found))
    """
)


def _two_writers(path: Path, n: int, max_bytes: int) -> list[dict[str, str | None]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), me, other, str(n), str(max_bytes)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for me, other in (("a", "b"), ("b", "a"))
    ]
    (path.parent / "go").touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(json.loads(out.splitlines()[-1]))
    return results


def test_two_processes_appending_see_every_entry(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    results = _two_writers(path, 400, 64 * 1024 * 1024)
    expected = {f"{name}-{i}": f"{name} {i}" for name in "ab" for i in range(400)}
    for found in results:
        assert found == expected
    reopened = PredictionCache(path=path)
    assert len(reopened) == 800
    lines = path.read_bytes().splitlines()
    assert len(lines) == 800
    assert all(json.loads(line)["key"] in expected for line in lines)
    assert path.stat().st_mode & 0o777 == 0o600


def test_two_processes_with_compaction_keep_the_file_bounded(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    max_bytes = 32 * 1024
    results = _two_writers(path, 400, max_bytes)
    assert path.stat().st_size <= max_bytes
    keys = [json.loads(line)["key"] for line in path.read_bytes().splitlines()]
    assert len(keys) == len(set(keys)) > 0
    for found in results:
        # What survived the last compaction is readable by both, and nothing is mixed up.
        assert all(found[k] == k.replace("-", " ") for k in keys)
        assert all(v is None or v == k.replace("-", " ") for k, v in found.items())


def test_compaction_keeps_newest_and_bounds_size(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    cache = PredictionCache(path=path, max_bytes=4096)
    for i in range(200):
        cache.put(f"k{i}", Prediction(action=f"echo {i}", observation=f"out {i}"))
        assert path.stat().st_size <= 4096
    fresh = PredictionCache(path=path, max_bytes=4096)
    assert fresh.get("k199") is not None
    assert fresh.get("k0") is None
    assert 0 < len(fresh) < 200


def test_a_torn_tail_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    PredictionCache(path=path).put("k1", Prediction(action="a", observation="one"))
    with path.open("a") as fh:
        fh.write('{"key": "torn')
    PredictionCache(path=path).put("k2", Prediction(action="b", observation="two"))
    fresh = PredictionCache(path=path)
    assert [fresh.get(k).observation for k in ("k1", "k2")] == ["one", "two"]  # type: ignore[union-attr]


def test_an_over_long_line_is_skipped_and_never_held_whole(tmp_path: Path) -> None:
    from aw_lookahead._jsonl import lines_within

    path = tmp_path / "cache.jsonl"
    PredictionCache(path=path).put("k1", Prediction(action="a", observation="one"))
    big = b'{"key": "big", "pad": "' + b"x" * (9 << 20) + b'"}\n'
    with path.open("ab") as fh:
        fh.write(big)
    PredictionCache(path=path).put("k2", Prediction(action="b", observation="two"))
    fresh = PredictionCache(path=path)
    assert [fresh.get(k).observation for k in ("k1", "k2")] == ["one", "two"]  # type: ignore[union-attr]
    assert fresh.get("big") is None
    with path.open("rb") as fh:  # by construction: no piece longer than the limit + 1
        pieces = list(lines_within(fh, 1 << 20))
    assert [len(p) if isinstance(p, bytes) else p for p in pieces][1] == len(big)
    assert all(len(p) <= (1 << 20) for p in pieces if isinstance(p, bytes))


def test_cache_records_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    secret = "sk-proj-" + "Zx9" * 10
    PredictionCache(path=path).put(
        "k", Prediction(action=f"curl -H 'x: {secret}'", observation=f"key {secret}")
    )
    text = path.read_text()
    assert secret not in text
    assert "[REDACTED_OPENAI_KEY_" in text


def test_max_bytes_must_be_sensible() -> None:
    with pytest.raises(UsageError, match="max_bytes"):
        PredictionCache(max_bytes=10)


def test_a_file_replaced_on_the_same_inode_is_indexed_again(tmp_path: Path) -> None:
    # A filesystem may hand a compacted file the inode of the one it replaced; the
    # reader must not trust offsets from the old content.
    path = tmp_path / "cache.jsonl"
    writer = PredictionCache(path=path)
    for i in range(5):
        writer.put(f"old-{i}", Prediction(action=f"echo {i}", observation=f"old {i}"))
    reader = PredictionCache(path=path)
    assert reader.get("old-3") is not None
    inode = path.stat().st_ino
    other = tmp_path / "other.jsonl"
    fresh = PredictionCache(path=other)
    for i in range(8):
        fresh.put(f"new-{i}", Prediction(action=f"echo {i}", observation=f"new {i}"))
    with path.open("r+b") as fh:
        fh.write(other.read_bytes())
    assert path.stat().st_ino == inode
    reader.clear()
    assert [reader.get(f"new-{i}").observation for i in range(8)] == [  # type: ignore[union-attr]
        f"new {i}" for i in range(8)
    ]
    assert reader.get("old-3") is None


def test_an_existing_cache_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "cache.jsonl"
    path.write_text("")
    path.chmod(0o644)
    PredictionCache(path=path).put("k", Prediction(action="a", observation="one"))
    assert (path.stat().st_mode & 0o777) == 0o600
