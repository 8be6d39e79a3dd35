"""eval run / judge / report and record terminal against the real local server and sandbox.

The small test model's quality is never asserted: only that every sample is
predicted or recorded as failed, that reruns resume, that the judge's replies
parse (or count as failed), and that the reports are written.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.evaluation.records import latest_records

DATA = Path(__file__).resolve().parents[1] / "examples" / "data" / "agentworldbench_terminal.jsonl"
pytestmark = pytest.mark.integration


def _server_args(server: Any) -> list[str]:
    return ["--base-url", server.base_url, "--model", server.model, "--api-key", server.api_key]


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_shipped_data_is_sandbox_generated_agentworldbench() -> None:
    records = _lines(DATA)
    assert len(records) >= 12
    for r in records:
        assert r["task"] == "terminal"
        assert r["system_str"]
        assert r["response"][r["turn_idx"] - 1].startswith("**Environment Observation:**\n$ ")


def test_run_killed_midway_then_rerun_finishes_only_missing(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "run", "--data", str(DATA), "--out", str(out), "--limit", "5",
            "--concurrency", "1", "--max-tokens", "24", "--no-progress", "--json",
            *_server_args(vllm_server)]  # fmt: skip
    code = f"import sys; from aw_lookahead.cli import main; sys.exit(main({argv!r}))"
    proc = subprocess.Popen([sys.executable, "-c", code])
    preds = out / "predictions.jsonl"
    deadline = time.monotonic() + 180
    try:
        while len(_lines(preds)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    before = {r["id"] for r in _lines(preds) if r["status"] == "ok"}
    assert before, "the first run should have finished some samples before the kill"

    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["skipped"] == len(before)
    assert summary["ok"] == 5 - len(before)
    records = _lines(preds)
    ok_ids = [r["id"] for r in records if r["status"] == "ok"]
    assert len(ok_ids) == len(set(ok_ids)) == 5  # nothing predicted twice
    for r in records:
        assert r["protocol"] == "official"  # AgentWorldBench input: the reference protocol
        assert "gen" in r
        assert r["sample"]["system_str"]
        if r.get("observation") is not None:
            assert r["rule"]["verdict"] in (0, 1)

    # judge (the same tiny model), then report
    assert main(["eval", "judge", "--out", str(out), "--judge-base-url", vllm_server.base_url,
                 "--judge-model", vllm_server.model, "--max-tokens", "96", "--retries", "1",
                 "--concurrency", "5", "--no-progress", "--json"]) == 0  # fmt: skip
    judged = latest_records(out / "judged.jsonl")
    assert len(judged) == 5
    for rec in judged.values():
        verdict = rec["judge"]
        if rec["status"] == "ok":
            assert not verdict["failed"]
            assert 0.0 <= verdict["total_100"] <= 100.0
            assert all(1 <= verdict[d] <= 5 for d in ("format", "factuality", "quality"))
            assert "<think>" not in json.dumps(verdict["raw"])
        else:
            assert verdict["failed"]
            assert "total" not in verdict
    capsys.readouterr()
    assert main(["eval", "report", "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    row = report["rows"]["terminal"]
    assert row["n"] == 5
    assert row["judged"] + row["judge_failed"] == 5
    for name in ("report.md", "report.json", "report.html", "report.png"):
        assert (out / name).stat().st_size > 0
    md = (out / "report.md").read_text()
    assert "No gap shown: judged with aw-lookahead's rubric judge" in md
    assert "| Qwen-AgentWorld-35B-A3B" not in md
    assert report["gaps"] == {}

    # exported for the reference script: its aggregation gives our numbers
    assert main(["eval", "export", "--out", str(out), "--to", str(tmp_path / "ref")]) == 0
    exported = _lines(tmp_path / "ref" / "judged.jsonl")
    assert len(exported) == 5
    assert _reference_overall(exported) == report["rows"]["overall"]["score"]


def _reference_overall(jobs: list[dict[str, Any]]) -> float | None:
    """The reference ``score`` step's overall number, written out from its documented rule."""
    totals = [j["total_score"] for j in jobs
              if j.get("failed", 1.0) == 0.0 and j.get("total_score", 0) != 0]  # fmt: skip
    if not totals:
        return None
    return round((sum(totals) / len(totals) - 1) / 4 * 100, 2)


def test_record_terminal_writes_agentworldbench(tmp_path: Path) -> None:
    script = tmp_path / "s.txt"
    script.write_text("# task: demo\necho hi > f\ncat f\nls nope\n")
    out = tmp_path / "rec.jsonl"
    assert main(["record", "terminal", "--script", str(script), "--out", str(out)]) == 0
    records = _lines(out)
    assert [r["turn_idx"] for r in records] == [1, 2, 3]
    assert records[1]["response"][1].endswith("$ cat f\nhi\n")
    assert "No such file" in records[2]["response"][2]
