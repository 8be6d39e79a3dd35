"""``aw-lookahead eval tasks``: the verb end to end against the real embedded model as the
policy, and its errors (no traceback, the exit code says which kind)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
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


def test_a_prediction_budget_below_one_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["eval", "tasks", "--lookahead", "--max-tokens", "0"]) == 2
    assert "--max-tokens must be >= 1, got 0" in capsys.readouterr().err


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


class _Done(BaseHTTPRequestHandler):
    """A policy endpoint that serves one model and answers every chat request with "done"."""

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": "fake", "object": "model"}]})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        message = {"role": "assistant", "content": "done"}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        self._send({"id": "c", "object": "chat.completion", "created": 0, "model": "fake",
                    "choices": [choice], "usage": usage})  # fmt: skip

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def done_policy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Done)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_two_runs_in_one_process_share_no_closed_client(
    done_policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The verb closes only the HTTP client it made, so ``main`` can run it again (a script
    running several configurations in one process)."""
    for run in ("a", "b"):
        out = tmp_path / f"{run}.json"
        argv = ["eval", "tasks", "--task", TASKS[0].name, "--step-limit", "1", "--no-progress"]
        assert main([*argv, "--policy-base-url", done_policy, "--out", str(out)]) == 0
        (result,) = json.loads(out.read_text())["results"]
        assert result["error"] is None, run
        assert result["model_calls"] == 1
    assert "0/1 tasks succeeded" in capsys.readouterr().out


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
