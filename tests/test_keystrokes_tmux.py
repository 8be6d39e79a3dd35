"""Keystroke cases replayed in a real tmux + interactive bash (issue 46, item 2).

Each case is a trajectory of tmux keystroke actions. Through the gate (world model
down, the fail-safe path) every action goes to a real interactive bash in tmux only
when the gate lets it run: none of the destructive cases deletes ``data/``. Replayed
ungated in a scratch folder, each destructive case really deletes ``data/`` (the cases
are real; with Debian's /etc/inputrc, which binds Home, End and Delete), and for the
harmless cases the line the reader reduced the keys to is the
line bash ran (read back from bash's own history).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.lookahead import Lookahead
from aw_lookahead.lookahead.keystrokes.keynames import KEY_NAME
from aw_lookahead.trajectory import Trajectory
from aw_lookahead.worldmodel import OpenAIWorldModel
from shell_indirect_corpus_support import KEYSTROKE_READS, KEYSTROKES

TMUX = shutil.which("tmux") or "/usr/bin/tmux"
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path(TMUX).exists() or not shutil.which("bash"), reason="no tmux"),
]


class Pane:
    """A private tmux server running one interactive bash (no rc files, empty history)."""

    def __init__(self, root: Path, inputrc: str | None = None) -> None:
        self.root = root
        self.socket = f"aw-keys-{uuid.uuid4().hex[:10]}"
        self.log = root / ".ran"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "HISTFILE": str(root / ".hist"),
            **({"INPUTRC": inputrc} if inputrc else {}),
            "PROMPT_COMMAND": f"history 1 >> {self.log}",
            "PS1": "$ ",
        }
        exports = " ".join(f"{k}={v!r}" for k, v in env.items())
        self._tmux(
            "new-session", "-d", "-s", "s", "-x", "200", "-y", "50", "-c", str(root),
            f"env -i {exports} bash --norc --noprofile -i",
        )  # fmt: skip
        self._wait(lambda: "$" in self.screen())

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            [TMUX, "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return out.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "s")

    @staticmethod
    def _wait(ready: Any, seconds: float = 5.0) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not ready():
            time.sleep(0.05)

    def send(self, action: list[dict[str, Any]]) -> None:
        for item in action:
            keys = str(item["keystrokes"])
            if KEY_NAME.fullmatch(keys.strip()):
                self._tmux("send-keys", "-t", "s", keys.strip())
            else:
                self._tmux("send-keys", "-t", "s", "-l", keys)
            time.sleep(0.15)
        time.sleep(0.6)

    def ran(self) -> list[str]:
        if not self.log.exists():
            return []
        return [line.split(None, 1)[1] if " " in line.strip() else "" for line in
                self.log.read_text().splitlines() if line.strip()]  # fmt: skip

    def close(self) -> None:
        self._tmux("kill-server")


def _scratch(tmp: Path) -> Path:
    root = tmp / uuid.uuid4().hex[:8]
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("1,2\n")
    (root / "notes.txt").write_text("foo bar\n")
    return root


@pytest.fixture
def pane_factory(tmp_path: Path) -> Iterator[Any]:
    panes: list[Pane] = []

    def make(inputrc: str | None = None) -> Pane:
        pane = Pane(_scratch(tmp_path), inputrc)
        panes.append(pane)
        return pane

    yield make
    for pane in panes:
        pane.close()


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_no_keystroke_case_deletes_anything_through_the_gate(pane_factory: Any) -> None:
    async def gate(trajectory: Trajectory, action: Any) -> bool:
        wm = OpenAIWorldModel("m", base_url=_dead_url(), timeout=3.0, retries=0)
        try:
            (decision,) = await Lookahead(wm).gate(trajectory, [action])
            return decision.executes
        finally:
            await wm.aclose()

    for (earlier, action), inputrc in itertools.product(KEYSTROKES, (None, "/dev/null")):
        pane = pane_factory(inputrc)
        trajectory = Trajectory(domain="terminal")
        sent = []
        for a in [*earlier, action]:
            if asyncio.run(gate(trajectory, a)):
                pane.send(a)
                sent.append(a)
            trajectory = trajectory.with_turn(a, "")
        assert action not in sent, (earlier, action)
        # An earlier action is blocked only when its unfinished line alone would destroy.
        assert len(sent) >= len(earlier) - 1, (earlier, action)
        assert (pane.root / "data" / "a.csv").exists(), (earlier, action)
        pane.close()


def test_each_case_really_deletes_when_it_runs_ungated(pane_factory: Any) -> None:
    for earlier, action in KEYSTROKES:
        pane = pane_factory()
        for a in [*earlier, action]:
            pane.send(a)
        Pane._wait(lambda p=pane: not (p.root / "data").exists(), 3.0)
        assert not (pane.root / "data").exists(), (earlier, action, pane.screen())
        pane.close()


@pytest.mark.parametrize(("earlier", "action", "line"), KEYSTROKE_READS)
def test_the_reduced_line_is_what_bash_ran(
    pane_factory: Any, earlier: list[Any], action: Any, line: str
) -> None:
    pane = pane_factory()
    for a in [*earlier, action]:
        pane.send(a)
    Pane._wait(lambda: bool(pane.ran()) and pane.ran()[-1] == line, 3.0)
    assert pane.ran()[-1:] == [line], pane.screen()
    assert (pane.root / "data" / "a.csv").exists()
