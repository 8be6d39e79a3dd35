"""``aw-lookahead eval tasks``: the verb end to end against the real embedded model as the
policy, and its errors (no traceback, the exit code says which kind)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.evaluation.agent_tasks import TASKS
from aw_lookahead.serving import find_free_port


def test_list_shows_every_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "tasks", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in lines] == [t.name for t in TASKS]


def test_an_unknown_family_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "tasks", "--family", "nope"]) == 2
    assert "unknown task family 'nope'; choose from csv_report" in capsys.readouterr().err


def test_a_policy_endpoint_that_is_down_is_one_clear_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"http://127.0.0.1:{find_free_port()}/v1"
    assert main(["eval", "tasks", "--policy-base-url", url, "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert f"the policy endpoint {url} does not answer" in err
    assert "Traceback" not in err


def test_an_existing_report_is_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    out.write_text("keep me\n")
    argv = ["eval", "tasks", "--out", str(out), "--policy-base-url", "http://127.0.0.1:9/v1"]
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "keep me\n"


def test_one_task_closed_loop_with_the_real_model_as_policy(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    argv = ["eval", "tasks", "--task", TASKS[0].name, "--step-limit", "2", "--json"]
    argv += ["--policy-base-url", vllm_server.base_url, "--policy-model", vllm_server.model]
    argv += ["--policy-max-tokens", "48", "--timeout", "600", "--out", str(out)]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["tasks"] == 1
    assert summary["label"] == vllm_server.model
    report = json.loads(out.read_text())
    (result,) = report["results"]
    assert result["name"] == TASKS[0].name
    assert 1 <= result["model_calls"] <= 2
    assert result["error"] is None
    assert summary["succeeded"] == int(result["success"])
