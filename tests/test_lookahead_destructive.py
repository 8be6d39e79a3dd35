"""Destructive terminal commands are risky when predicted to succeed (their success is silent)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from aw_lookahead.lookahead import Lookahead, Outcome, RuleJudge
from aw_lookahead.lookahead.destructive import destructive_command
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, Prediction


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf data",
        "cd src && rm -r build",
        "git push --force origin main",
        "git push origin +main",
        "git reset --hard HEAD~1",
        "git clean -fdx",
        "git branch -D feature",
        "find . -name '*.o' -delete",
        "sqlite3 app.db 'DROP TABLE users'",
        "kill -9 4242",
        "dd if=/dev/zero of=disk.img bs=1M count=1",
        "rm notes.tmp",
        "rm -f out.log",
    ],
)
def test_destructive_commands_are_recognised(command: str) -> None:
    assert destructive_command(command)
    assert destructive_command([{"keystrokes": command + "\n", "duration": 1.0}])


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "git status",
        "echo rm -rf x",
        "git push origin main",
    ],
)
def test_ordinary_commands_are_not(command: str) -> None:
    assert destructive_command(command) is None


def _run(cmd: str, cwd: Path) -> str:
    done = subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


async def test_silent_successful_rm_rf_is_vetoed_as_risky(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("1,2\n")
    real_rm = _run("rm -rf data", tmp_path)  # what a faithful model predicts: nothing
    assert real_rm == ""
    missing_rm = _run("rm -r nothere", tmp_path)  # a predicted failure stays a failure
    assert "No such file or directory" in missing_rm

    outputs = {"rm -rf data": real_rm, "rm -r nothere": missing_rm, "ls": _run("ls", tmp_path)}
    lk = Lookahead(FunctionWorldModel(lambda _t, a: outputs[str(a)]))
    traj = Trajectory(domain="terminal", task="summarise data/a.csv")
    rm_ok, rm_fail, ls = await lk.gate(traj, list(outputs))
    assert rm_ok.outcome is Outcome.RISKY
    assert not rm_ok.executes
    assert any(s.name == "risk.destructive_command" for s in rm_ok.signals)
    assert "recursively" in rm_ok.reason
    assert rm_fail.outcome is Outcome.FAILURE
    assert ls.executes


async def test_action_rule_can_be_switched_off_and_skips_other_domains() -> None:
    pred = Prediction(action="rm -rf data", observation="")
    term = Trajectory(domain="terminal")
    off = await RuleJudge(destructive_actions=False).judge(term, "rm -rf data", pred)
    assert off.outcome is Outcome.UNKNOWN
    web = await RuleJudge().judge(Trajectory(domain="web"), "rm -rf data", pred)
    assert web.outcome is Outcome.UNKNOWN
