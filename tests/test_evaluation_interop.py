"""Files moving both ways between our evaluator and the reference AgentWorldBench script.

The reference-format files are written here from the field names the
reference script documents (``gen``; ``total_score``, the five dimensions,
``failed``, ``strengths``, ``weaknesses``, ``extracted_output``,
``judge_raw_output``, ``error_message``); the expected numbers are worked out
by hand with the reference aggregation rule: per domain, records with
``failed == 0``; per dimension the mean of the non-zero values; 0-100 as
``(mean - 1) / 4 * 100``; overall pools every valid ``total_score``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.evaluation.records import load_samples
from aw_lookahead.prompts import PromptSet

MARK = "**Environment Observation:**"
DIMS = ("format", "factuality", "consistency", "realism", "quality")


def _bench(task: str, rid: str, cmd: str, out: str) -> dict[str, Any]:
    prompt = f'### Turn 1\n**Action:**\n```json\n[{{"keystrokes": "{cmd}\\n"}}]\n```'
    return {"task": task, "id": rid, "prompt": [prompt], "response": [f"{MARK}\n$ {cmd}\n{out}"],
            "current_prompt": prompt, "system_str": "Simulate.", "turn_idx": 1,
            "total_turns": 1}  # fmt: skip


def _judged(scores: tuple[int, ...] | None, total: float = 0.0, **extra: Any) -> dict[str, Any]:
    if scores is None:
        return {"total_score": 0, "failed": 1.0, "error_message": "Judge scoring failed", **extra}
    return {"total_score": total, **dict(zip(DIMS, scores, strict=True)), "failed": 0.0,
            "strengths": ["s"], "weaknesses": [], "judge_raw_output": "<final_evaluation>..",
            **extra}  # fmt: skip


@pytest.fixture
def reference_run(tmp_path: Path) -> Path:
    """A result folder as the reference script leaves it: predictions.jsonl and judged.jsonl."""
    run = tmp_path / "results"
    run.mkdir()
    rows = [
        (_bench("terminal", "t1", "ls", "a\n"), "<predicted_observation>a</predicted_observation>",
         _judged((4, 3, 5, 4, 4), 4.0)),
        (_bench("terminal", "t2", "pwd", "/x\n"), "/x", _judged((2, 0, 3, 2, 3), 2.5)),
        (_bench("terminal", "t3", "id", "uid=0\n"), "uid=1", _judged(None)),
        (_bench("lwm/mcp", "m1", "date", "Mon\n"), "Mon", _judged((5, 5, 5, 5, 5), 5.0)),
        (_bench("lwm/mcp", "m2", "who", "root\n"), "",
         {"failed": 1.0, "error_message": "No model generation"}),
    ]  # fmt: skip
    with (run / "predictions.jsonl").open("w") as preds, (run / "judged.jsonl").open("w") as jd:
        for bench, gen, judged in rows:
            preds.write(json.dumps({**bench, "gen": gen}) + "\n")
            jd.write(json.dumps({**bench, "gen": gen, **judged}) + "\n")
    return run


def _report(run: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    capsys.readouterr()
    assert main(["eval", "report", "--out", str(run), "--json"]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_report_on_reference_files_gives_the_reference_numbers(
    reference_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(reference_run, capsys)
    rows = report["rows"]
    assert list(rows) == ["mcp", "terminal", "overall"]
    terminal = rows["terminal"]
    assert (terminal["n"], terminal["judged"], terminal["judge_failed"]) == (3, 2, 1)
    assert terminal["score"] == 56.25  # mean(4.0, 2.5) = 3.25
    assert [terminal[d] for d in DIMS] == [50.0, 50.0, 75.0, 50.0, 62.5]  # factuality: [3]
    assert (rows["mcp"]["n"], rows["mcp"]["judged"], rows["mcp"]["score"]) == (2, 1, 100.0)
    assert rows["mcp"]["predicted"] == 1  # m2 had no generation
    assert rows["overall"]["score"] == 70.83  # mean(4.0, 2.5, 5.0) = 3.8333
    assert report["protocol"] == {"official": 5}
    assert report["judge"]["kinds"] == {"reference": 5}
    assert report["gap_note"] is None  # official protocol + reference judge: gaps shown
    assert report["gaps"]["Qwen-AgentWorld-35B-A3B"]["terminal"] == round(56.25 - 53.96, 2)
    assert rows["terminal"]["line_f1"] is not None  # rule check beside the judge scores


def test_export_round_trips_reference_files(
    reference_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _report(reference_run, capsys)
    out = tmp_path / "exported"
    assert main(["eval", "export", "--out", str(reference_run), "--to", str(out)]) == 0
    exported_first = (out / "judged.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["eval", "export", "--out", str(reference_run), "--to", str(out)]) == 2
    assert "exists (and 1 more); pass --force to replace" in capsys.readouterr().err
    assert (out / "judged.jsonl").read_bytes() == exported_first
    argv = ["eval", "export", "--out", str(reference_run), "--to", str(out), "--force"]
    assert main(argv) == 0
    original = {json.loads(x)["id"]: json.loads(x) for x in
                (reference_run / "judged.jsonl").read_text().splitlines()}  # fmt: skip
    exported = {json.loads(x)["id"]: json.loads(x) for x in
                (out / "judged.jsonl").read_text().splitlines()}  # fmt: skip
    assert set(exported) == set(original)
    for rid, line in original.items():
        again = exported[rid]
        assert "status" not in again
        for key in ("task", "prompt", "response", "turn_idx", "gen", "failed", "total_score"):
            assert again.get(key) == line.get(key), (rid, key)
        if line["failed"] == 0.0:
            assert [again[d] for d in DIMS] == [line[d] for d in DIMS]
    assert all("gen" in json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines())
    after = _report(out, capsys)
    assert after["rows"] == before["rows"]


def test_judge_reads_reference_predictions(
    vllm_server: Any, reference_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (reference_run / "judged.jsonl").unlink()
    assert main(["eval", "judge", "--out", str(reference_run), "--judge-base-url",
                 vllm_server.base_url, "--judge-model", vllm_server.model, "--max-tokens", "96",
                 "--retries", "0", "--no-progress", "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["total"] == 5
    assert summary["judge"] == "rubric"
    report = _report(reference_run, capsys)
    assert report["rows"]["terminal"]["predicted"] == 3
    assert report["rows"]["mcp"]["n"] == 2
    assert report["judge"]["kinds"] == {"rubric": 5}
    assert "rubric judge" in report["gap_note"]
    assert report["gaps"] == {}
    md = (reference_run / "report.md").read_text()
    assert "No gap shown: judged with aw-lookahead's rubric judge" in md
    assert "Qwen-AgentWorld-35B-A3B" not in md


@pytest.mark.parametrize(
    ("protocol", "verdict", "why"),
    [
        ("official", {"kind": "rubric"}, "judged with aw-lookahead's rubric judge"),
        ("ours", {"kind": "reference", "user_template": "/x/task_configs.py"}, "protocol 'ours'"),
        ("official", {"kind": "reference", "user_template": "aw-lookahead wording"},
         "our own user-message wording"),
    ],
)  # fmt: skip
def test_report_shows_no_gap_and_says_why(
    reference_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    protocol: str,
    verdict: dict[str, Any],
    why: str,
) -> None:
    ours = tmp_path / "ours"
    ours.mkdir()
    recs = [json.loads(x) for x in (reference_run / "judged.jsonl").read_text().splitlines()]
    with (ours / "judged.jsonl").open("w") as fh:
        for r in recs:
            sample = {k: r[k] for k in ("task", "id", "prompt", "response", "current_prompt",
                                        "system_str", "turn_idx", "total_turns")}  # fmt: skip
            judge = {**verdict, "failed": False, "model": "small",
                     **{d: 3 for d in DIMS}, "total": 3.0, "total_100": 50.0}  # fmt: skip
            fh.write(json.dumps({"id": r["id"], "domain": r["task"].split("/")[-1],
                                 "protocol": protocol, "sample": sample, "status": "ok",
                                 "observation": "x", "judge": judge}) + "\n")  # fmt: skip
    report = _report(ours, capsys)
    assert report["gaps"] == {}
    assert why in report["gap_note"]
    assert report["rows"]["overall"]["score"] == 50.0
    md = (ours / "report.md").read_text()
    assert f"No gap shown: {report['gap_note']}" in md
    assert "| Qwen-AgentWorld" not in md


@pytest.mark.parametrize(
    "lines",
    [
        ['{"id": 1, "foo": 2}\n', "not json\n"],
        [
            json.dumps(
                {
                    "task": "nowhere",
                    "id": "x",
                    "prompt": ["p"],
                    "response": ["r"],
                    "turn_idx": 1,
                    "gen": "g",
                }
            )
            + "\n"
        ],
    ],
)
def test_file_without_a_usable_record_is_an_error(
    tmp_path: Path, lines: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "predictions.jsonl").write_text("".join(lines))
    assert main(["eval", "report", "--out", str(tmp_path)]) == 2
    assert "holds no usable record" in capsys.readouterr().err
    assert main(["eval", "judge", "--out", str(tmp_path), "--judge-base-url", "http://x/v1",
                 "--judge-model", "m"]) == 2  # fmt: skip
    assert main(["eval", "export", "--out", str(tmp_path), "--to", str(tmp_path / "e")]) == 2


def test_folder_reads_test_files_unless_told(tmp_path: Path) -> None:
    (tmp_path / "terminal_test.jsonl").write_text(json.dumps(_bench("terminal", "a", "ls", "")))
    (tmp_path / "terminal_train.jsonl").write_text(json.dumps(_bench("terminal", "b", "ls", "")))
    assert [s.sample_id for s in load_samples(tmp_path)] == ["a"]
    assert [s.sample_id for s in load_samples(tmp_path, pattern="*.jsonl")] == ["a", "b"]


def test_loaded_prompt_placeholders_are_filled_or_removed(tmp_path: Path) -> None:
    (tmp_path / "mcp").mkdir()
    (tmp_path / "mcp" / "system_prompt.txt").write_text(
        'Tools:\n{tool_definitions}\nExamples:\n{demonstrations}\nJSON stays: {"a": 1}\n'
    )
    full = PromptSet(tmp_path, tool_layout="full").system("mcp", tools=[{"name": "read"}])
    assert full == 'Tools:\n{"name": "read"}\nExamples:\nJSON stays: {"a": 1}\n'
    compact = PromptSet(tmp_path).system("mcp", tools=[{"name": "read"}])
    assert compact.startswith("Tools:\nTools on this server: read.\n")
    assert compact.endswith('\nExamples:\nJSON stays: {"a": 1}\n')
    assert "{demonstrations}" not in compact


@pytest.mark.parametrize("verb", [["eval", "run"], ["simulate"], ["mcp"], ["proxy"], ["train"]])
def test_prompts_option_on_every_verb_that_renders_prompts(
    verb: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*verb, "--help"])
    assert "--prompts" in capsys.readouterr().out
