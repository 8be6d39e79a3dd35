"""The CLI, called as ``main(argv)``."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import VERB_MODULES, build_parser, main
from aw_lookahead.trajectory import Trajectory, Turn, write_trajectories


def _verbs() -> list[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "verb")
    return sorted(sub.choices)  # type: ignore[arg-type]


def test_every_verb_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    verbs = _verbs()
    assert set(VERB_MODULES) <= set(verbs)
    for verb in verbs:
        with pytest.raises(SystemExit) as info:
            main([verb, "--help"])
        assert info.value.code == 0
        assert f"aw-lookahead {verb}" in capsys.readouterr().out


def test_no_verb_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "simulate" in capsys.readouterr().out


@pytest.mark.integration
def test_simulate_prints_a_prediction(
    vllm_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    write_trajectories(
        path, [Trajectory(domain="terminal", turns=[Turn(action="ls", observation="$ ls\na.txt")])]
    )
    argv = ["simulate", "cat a.txt", "--trajectory", str(path), "--base-url", vllm_server.base_url]
    argv += ["--model", vllm_server.model, "--max-tokens", "16", "--seed", "7"]
    assert main([*argv, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["action"] == "cat a.txt"
    assert out["observation"].strip()
    assert out["usage"]["prompt_tokens"] > 0
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.strip()
    assert "prompt tokens" in captured.err


def test_simulate_against_a_dead_port_fails_within_the_timeout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["simulate", "ls", "--base-url", f"http://127.0.0.1:{port}/v1", "--timeout", "60"])
    assert code == 1
    err = capsys.readouterr().err
    assert "ServerUnreachableError" in err  # refused, not waited out (that is a timeout error)
    assert "WorldModelTimeoutError" not in err
    assert f"127.0.0.1:{port}" in err
    assert "aw-lookahead serve --local" in err


@pytest.mark.integration
def test_simulate_with_a_wrong_model_lists_served_models(
    vllm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["simulate", "ls", "--base-url", vllm_server.base_url, "--model", "gpt-nope"])
    assert code == 1
    err = capsys.readouterr().err
    assert "does not serve model 'gpt-nope'" in err
    assert vllm_server.model in err


@pytest.mark.integration
def test_models_lists_the_served_model(
    vllm_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "--base-url", vllm_server.base_url, "--json"]) == 0
    models = json.loads(capsys.readouterr().out)
    assert models[0]["id"] == vllm_server.model
    assert models[0]["max_model_len"] == 4096


def test_bad_inputs_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "{broken", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "looks like JSON but does not parse" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    assert main(["simulate", "ls", "--trajectory", str(bad)]) == 2
    assert f"{bad}:1" in capsys.readouterr().err
    assert main(["simulate", "ls", "--history", '[{"action": "ls"}]']) == 2
    assert "--history item 0" in capsys.readouterr().err


def test_proxy_gate_mode_predicts_only_what_its_decision_reads() -> None:
    from aw_lookahead.cli.proxy import GATE_MAX_TOKENS, PREDICTION_MAX_TOKENS, prediction_budget

    def budget(*argv: str) -> int:
        return prediction_budget(build_parser().parse_args(["proxy", *argv, "--", "srv"]))

    assert budget() == budget("--mode", "gate") == GATE_MAX_TOKENS < PREDICTION_MAX_TOKENS
    for mode in ("preview", "dryrun", "shadow"):
        assert budget("--mode", mode) == PREDICTION_MAX_TOKENS, mode
    assert budget("--mode", "gate", "--max-tokens", "300") == 300
