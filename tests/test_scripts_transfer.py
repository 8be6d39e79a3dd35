"""``scripts/transfer.py`` without measuring: options, refusal to replace output, checkpoints
kept only under the same settings, and the table rendered from a canned result. No test
here starts a server or runs a task."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from aw_lookahead.cli import build_parser
from aw_lookahead.evaluation.agent_tasks import TASKS

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "transfer.py"


@pytest.fixture(scope="module")
def transfer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("transfer_script", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["transfer_script"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--before-url", "http://h/v1"], "--before-url and --before-model go together"),
        (["--after-model", "warmup"], "--after-url and --after-model go together"),
        (["--force", "--resume"], "--force and --resume exclude each other"),
        (["--step-limit", "0"], "--step-limit must be >= 1"),
        (["--timeout", "0"], "--timeout must be > 0"),
        (["--family", "nope"], "unknown task family 'nope'"),
        (["--fidelity-terminal", "."], "has no test.jsonl"),
        (["--fidelity-from", "missing.json"], "does not exist"),
    ],
)
def test_bad_options_exit_2_with_one_line(
    transfer: ModuleType,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    message: str,
) -> None:
    assert transfer.main(["--out", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_fidelity_from_and_measuring_fidelity_exclude_each_other(
    transfer: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text("")
    (tmp_path / "f.json").write_text("{}")
    argv = ["--out", str(tmp_path / "out"), "--fidelity-from", str(tmp_path / "f.json")]
    assert transfer.main([*argv, "--fidelity-mcp", str(tmp_path / "data")]) == 2
    assert "drop --fidelity-terminal/-mcp" in capsys.readouterr().err


def test_a_finished_run_is_never_replaced_without_force(
    transfer: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "transfer.md").write_text("keep me\n")
    for extra in ([], ["--resume"]):
        assert transfer.main(["--out", str(tmp_path), *extra]) == 2
        assert "pass --force to replace" in capsys.readouterr().err
    assert (tmp_path / "transfer.md").read_text() == "keep me\n"
    assert transfer.main(["--out", str(tmp_path / "transfer.md")]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err


def test_checkpoints_need_resume_or_force(transfer: ModuleType, tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "before-plain.json").write_text("{}")
    with pytest.raises(transfer.UsageProblem, match="pass --resume to continue it"):
        transfer.prepare_out(tmp_path, force=False, resume=False)
    transfer.prepare_out(tmp_path, force=False, resume=True)
    assert (configs / "before-plain.json").exists()
    transfer.prepare_out(tmp_path, force=True, resume=False)
    assert list(configs.iterdir()) == []


def test_resume_refuses_checkpoints_of_other_settings(transfer: ModuleType, tmp_path: Path) -> None:
    args = transfer.parse_args(["--out", str(tmp_path), "--resume"])
    (tmp_path / "configs").mkdir()
    record = {"settings": transfer.settings(args)}
    (tmp_path / "configs" / "before-plain.json").write_text(json.dumps(record))
    transfer.check_checkpoints(args)  # same settings: kept
    other = transfer.parse_args(["--out", str(tmp_path), "--resume", "--step-limit", "3"])
    with pytest.raises(transfer.UsageProblem, match="other step_limit"):
        transfer.check_checkpoints(other)
    data = tmp_path / "data"
    data.mkdir()
    (data / "test.jsonl").write_text("")
    measured = transfer.parse_args(measured_argv(tmp_path, data))
    transfer.check_checkpoints(measured)  # fidelity can be added to a run later
    (tmp_path / "configs" / "fidelity-before.json").write_text(
        json.dumps({"settings": transfer.settings(measured)})
    )
    transfer.check_checkpoints(args)  # a fidelity checkpoint does not bind a run without it
    fewer = [*measured_argv(tmp_path, data), "--fidelity-limit", "5"]
    with pytest.raises(transfer.UsageProblem, match="other fidelity"):
        transfer.check_checkpoints(transfer.parse_args(fewer))


def measured_argv(out: Path, data: Path) -> list[str]:
    return ["--out", str(out), "--resume", "--fidelity-mcp", str(data)]


def test_tasks_argv_is_self_lookahead_and_parses_as_the_verb(
    transfer: ModuleType, tmp_path: Path
) -> None:
    args = transfer.parse_args(["--out", str(tmp_path), "--family", "csv_report"])
    argv = transfer.tasks_argv(args, "http://h:1/v1", "m", True, tmp_path / "r.json")
    parsed = build_parser().parse_args(argv)
    assert (parsed.policy_base_url, parsed.policy_model) == ("http://h:1/v1", "m")
    assert (parsed.base_url, parsed.model) == ("http://h:1/v1", "m")
    assert parsed.lookahead
    assert parsed.max_tokens == 192
    assert parsed.family == ["csv_report"]
    plain = build_parser().parse_args(
        transfer.tasks_argv(args, "http://h:1/v1", "m", False, tmp_path / "r.json")
    )
    assert not plain.lookahead


def _results(successes: list[bool]) -> list[dict[str, Any]]:
    return [
        {
            "name": t.name,
            "family": t.family,
            "success": ok,
            "model_calls": 3,
            "commands": ["ls", "cat x"],
            "vetoes": 1,
            "error": None if ok else "Timeout: slow",
            "seconds": 10.0,
        }
        for t, ok in zip(TASKS[:4], successes, strict=True)
    ]


def test_config_record_adds_model_calls_commands_and_families(transfer: ModuleType) -> None:
    record = transfer.config_record(
        "after-lookahead",
        "after",
        True,
        ["eval", "tasks"],
        _results([True, False, False, True]),
    )
    assert record["command"] == "aw-lookahead eval tasks"
    assert (record["tasks"], record["succeeded"], record["success_rate"]) == (4, 2, 0.5)
    assert (record["vetoes"], record["errors"]) == (4, 2)
    assert (record["model_calls"], record["commands_run"], record["seconds"]) == (12, 8, 40.0)
    assert record["families"] == {TASKS[0].family: [2, 4]}
    assert record["error_examples"] == ["Timeout: slow"]


def test_table_rendered_from_a_canned_result(transfer: ModuleType) -> None:
    outcomes = ([False] * 4, [True] + [False] * 3, [False] * 4, [True, True, False, False])
    configs = []
    for (side, lookahead), ok in zip(transfer.CONFIGS, outcomes, strict=True):
        name = transfer.config_name(side, lookahead)
        record = transfer.config_record(name, side, lookahead, ["eval", "tasks"], _results(ok))
        record["wall_seconds"] = 120.0
        configs.append(record)
    fidelity_file = {
        "domains": {
            "terminal": {
                "base": {"samples": 130, "rule_pass": 0.046, "line_f1": 0.067},
                "adapter": {"samples": 130, "rule_pass": 0.177, "line_f1": 0.419},
            }
        }
    }
    report = {
        "created": "2026-12-03",
        "settings": {"step_limit": 5, "tasks": 4},
        "load_average": [3.1, 4.2],
        "models": {
            "before": {"model": "smol", "serve": "aw-lookahead serve --local --base-only"},
            "after": {"model": "smol", "serve": "aw-lookahead serve --local"},
        },
        "configs": configs,
        "fidelity": {
            "source": "docs",
            "command": "python bench/embedded_fidelity.py",
            "domains": {
                d: {"before": v["base"], "after": v["adapter"]}
                for d, v in fidelity_file["domains"].items()
            },
        },
    }
    text = transfer.render_markdown(report)
    assert "step limit 5, 4 tasks, load average 3.10 at the start, 4.20 at the end" in text
    assert "self-lookahead" in text
    assert "| before (smol) | no | 0/4 | 0.0% | 12 | 8 | 4 | 4 | 2.0 |" in text
    assert "| after (smol) | self | 2/4 | 50.0% | 12 | 8 | 4 | 2 | 2.0 |" in text
    family = TASKS[0].family
    assert f"| {family} | 0/4 | 1/4 | 0/4 | 2/4 |" in text
    assert "| terminal | rule_pass | 4.6% | 17.7% |" in text
    assert "| terminal | samples | 130 | 130 |" in text
    assert "| terminal | outcome_agreement | n/a | n/a |" in text
    assert "- before server: `aw-lookahead serve --local --base-only`" in text
    assert "scored the same way by scripts/transfer.py: `python bench/embedded_fidelity.py`" in text
    no_fidelity = transfer.render_markdown({**report, "fidelity": None})
    assert "World-model fidelity: not measured in this run." in no_fidelity


def test_fidelity_from_file_maps_base_and_adapter(transfer: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    path.write_text(json.dumps({"domains": {"mcp": {"base": {"n": 1}, "adapter": {"n": 2}}}}))
    loaded = transfer.fidelity_from_file(path)
    assert loaded["domains"] == {"mcp": {"before": {"n": 1}, "after": {"n": 2}}}
    path.write_text(json.dumps({"domains": {"mcp": {"base": {}}}}))
    with pytest.raises(transfer.UsageProblem, match=r"not an embedded_fidelity\.py --json result"):
        transfer.fidelity_from_file(path)


def test_a_configuration_is_assembled_from_kept_family_checkpoints(
    transfer: ModuleType, tmp_path: Path
) -> None:
    """--resume: families already run are not run again (no server is reached here)."""
    args = transfer.parse_args(["--out", str(tmp_path), "--resume", "--family", "csv_report"])
    transfer.prepare_out(tmp_path, force=False, resume=True)
    folder = tmp_path / "configs" / "before-plain"
    folder.mkdir()
    assert {t.family for t in TASKS[:4]} == {"csv_report"}  # what _results covers
    results = _results([True, False, False, False])
    chunk = {"settings": transfer.settings(args), "results": results, "wall_seconds": 30.0,
             "load_average": [2.0, 3.5]}  # fmt: skip
    (folder / "csv_report.json").write_text(json.dumps(chunk))
    record = transfer.run_config(args, "before", False, "http://127.0.0.1:9/v1", "m")
    assert (record["tasks"], record["succeeded"], record["wall_seconds"]) == (4, 1, 30.0)
    assert record["load_average"] == [2.0, 3.5]
    assert "--family csv_report" in record["command"]
    assert "--force" not in record["command"]
    assert json.loads((tmp_path / "configs" / "before-plain.json").read_text()) == record


def test_a_family_chunk_names_its_tasks_instead_of_the_selection(
    transfer: ModuleType, tmp_path: Path
) -> None:
    args = transfer.parse_args(["--out", str(tmp_path), "--family", "csv_report"])
    argv = transfer.tasks_argv(args, "u", "m", False, tmp_path / "p.json", ["a", "b"])
    assert "--family" not in argv
    assert argv[argv.index("--task") :][:4] == ["--task", "a", "--task", "b"]
