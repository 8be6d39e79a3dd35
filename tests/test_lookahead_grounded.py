"""The engine with an environment: observed vetoes, the state shown to the model, never a write.

The world model here is the package's :class:`FunctionWorldModel` (its answer is given, so
what is tested is what the engine does around it) or, in the integration test, the real
embedded model behind a recording relay.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.lookahead import DecisionKind, Lookahead
from aw_lookahead.lookahead.environment import Observation
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.sandbox import TerminalSandbox
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from relay_support import recording_relay

TERMINAL = Trajectory(domain="terminal")


class Asked:
    """Counts the actions the world model was asked about (its answer: a plain success)."""

    def __init__(self, answer: str = "") -> None:
        self.actions: list[Action] = []
        self.answer = answer

    def __call__(self, trajectory: Trajectory, action: Action) -> str:
        self.actions.append(action)
        return self.answer or f"$ {action}\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "cedar.txt").write_text("cedar\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("alpha\n")
    return tmp_path


async def test_an_observed_missing_file_is_vetoed_without_asking_the_model(
    workspace: Path,
) -> None:
    asked = Asked()
    engine = Lookahead(FunctionWorldModel(asked), environment=workspace)
    missing, present = await engine.gate(TERMINAL, ["cat cdear.txt", "cat cedar.txt"])
    assert missing.kind is DecisionKind.VETO
    assert veto_basis(missing) == "observed"
    assert missing.p_failure == 1.0
    assert missing.prediction is None
    text = missing.explain()
    assert "did you mean `cedar.txt`?" in text
    assert text.index("Why:") < text.index("NOT executed")
    assert "observed, not predicted" in text
    assert present.kind is DecisionKind.EXECUTE
    assert asked.actions == ["cat cedar.txt"]
    assert engine.stats.observed_vetoes == 1
    assert present.metadata["observed"]["facts"][-1]["subject"] == "cedar.txt"


async def test_select_prunes_what_cannot_run_and_rollout_stops_at_it(workspace: Path) -> None:
    engine = Lookahead(FunctionWorldModel(Asked()), environment=str(workspace))
    chosen = await engine.select(TERMINAL, ["cat cdear.txt", "cat cedar.txt"])
    assert chosen.chosen is not None
    assert chosen.chosen.action == "cat cedar.txt"
    assert [d.action for d in chosen.pruned] == ["cat cdear.txt"]
    rolled = await engine.rollout(TERMINAL, ["cd dta", "ls"])
    assert rolled.failed_at == 0
    assert "did you mean `data`?" in rolled.reason


async def test_an_environment_that_fails_leaves_the_action_to_the_model(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        async def observe(self, trajectory: Trajectory, action: Action) -> Observation | None:
            raise OSError("disk on fire")

    asked = Asked()
    engine = Lookahead(FunctionWorldModel(asked), environment=Broken())
    with caplog.at_level(logging.WARNING, logger="aw_lookahead"):
        [decision] = await engine.gate(TERMINAL, ["cat cdear.txt"])
    assert decision.kind is DecisionKind.EXECUTE
    assert asked.actions == ["cat cdear.txt"]
    assert engine.stats.observe_errors == 1
    assert "disk on fire" in caplog.text


async def test_a_destructive_veto_leads_with_what_it_destroys(workspace: Path) -> None:
    said = "rm: cannot remove 'data': Permission denied"
    engine = Lookahead(FunctionWorldModel(lambda t, a: said), environment=workspace)
    [decision] = await engine.gate(TERMINAL, ["rm -rf data"])
    assert decision.kind is DecisionKind.VETO
    assert veto_basis(decision) == "action"
    lines = decision.explain().splitlines()
    assert lines[1].startswith("Why:")
    assert "destroys data" in lines[1]
    assert "the prediction also says" in lines[1]


def _snapshot(root: Path) -> dict[str, tuple[int, int, str, int]]:
    """Every path under ``root``: mode, size, content digest, modification time."""
    out: dict[str, tuple[int, int, str, int]] = {}
    for base, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(base) / name
            st = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
            out[str(path.relative_to(root))] = (st.st_mode, st.st_size, digest, st.st_mtime_ns)
    return out


REPLAY = [
    "ls",
    "cat cdear.txt",
    "touch made-by-touch.txt",
    "echo hi > logs/app.log",
    "mkdir -p logs && echo hi > logs/app.log",
    "python3 -c \"open('made-by-python.txt', 'w').write('x')\"",
    "make build",
    "git init -q repo && cd repo && git checkout -b main",
    "cp cedar.txt backup/",
    "mv cedar.txt cedar-renamed.txt",
    "rm -rf data",
    "cd repo && git checkout nope",
    "sed -i 's/alpha/ALPHA/' data/a.txt",
    "tar -czf site.tgz data && tar -xzf site.tgz",
]


async def test_looking_never_writes_and_never_runs_anything(tmp_path: Path) -> None:
    """Real steps replayed in a real sandbox: before and after every look (with the
    environment, and without it) the tree is byte-identical; then the step runs for real."""
    async with TerminalSandbox(root=tmp_path) as sandbox:
        sandbox.write_file("cedar.txt", "cedar\n")
        sandbox.write_file("data/a.txt", "alpha\n")
        sandbox.write_file("Makefile", "build:\n\ttouch made-by-make.txt\n")
        grounded = Lookahead(FunctionWorldModel(Asked()), environment=sandbox, cache=False)
        plain = Lookahead(FunctionWorldModel(Asked()), cache=False)
        trajectory = TERMINAL
        looked = 0
        for command in REPLAY:
            for engine in (grounded, plain):
                before = _snapshot(tmp_path)
                [decision] = await engine.gate(trajectory, [command])
                assert _snapshot(tmp_path) == before, command
                looked += engine is grounded and "observed" in decision.metadata
            result = await sandbox.run(command)
            trajectory = trajectory.with_turn(command, result.output)
        assert looked >= len(REPLAY) - 4
        made = {p.name for p in await asyncio.to_thread(lambda: list(tmp_path.rglob("made-by-*")))}
        assert made == {"made-by-touch.txt", "made-by-python.txt", "made-by-make.txt"}


@pytest.mark.integration
async def test_the_model_is_asked_with_what_was_observed(vllm_server: Any, tmp_path: Path) -> None:
    """The real embedded model behind a recording relay: the request for a present file
    carries the observed state; a missing one is never sent."""
    (tmp_path / "cedar.txt").write_text("cedar\n")
    with recording_relay(vllm_server.base_url) as relay:
        model = OpenAIWorldModel(
            vllm_server.model, base_url=relay.base_url, max_tokens=32, temperature=0.0
        )
        engine = Lookahead(model, environment=tmp_path, cache=False)
        try:
            missing, present = await engine.gate(TERMINAL, ["cat cdear.txt", "wc -l cedar.txt"])
        finally:
            await model.aclose()
    assert veto_basis(missing) == "observed"
    assert present.kind is not DecisionKind.VETO or veto_basis(present) != "observed"
    bodies = [json.dumps(b) for b in relay.chat_bodies()]
    assert bodies, "the model was never asked"
    assert not any("cdear.txt" in b for b in bodies)
    asked = [b for b in bodies if "wc -l cedar.txt" in b]
    assert asked
    assert all("Observed read-only" in b and "`cedar.txt`: file, 6 bytes" in b for b in asked)


async def test_a_rename_onto_a_name_seen_free_is_not_destructive(workspace: Path) -> None:
    engine = Lookahead(FunctionWorldModel(lambda t, a: ""), environment=workspace)
    rename, onto_file, into_dir, made_first, two = await engine.gate(
        TERMINAL,
        [
            "mv cedar.txt final.txt",
            "mv cedar.txt data/a.txt",
            "mv cedar.txt data",
            "touch final.txt && mv cedar.txt final.txt",
            "mv cedar.txt final.txt && rm data/a.txt",
        ],
    )
    assert rename.kind is DecisionKind.EXECUTE
    assert not any(s.name.startswith("risk.") for s in rename.signals)
    fresh = [f for f in rename.metadata["observed"]["facts"] if f["kind"] == "fresh"]
    assert fresh == [
        {
            "kind": "fresh",
            "subject": "final.txt",
            "found": False,
            "where": "./",
            "detail": "",
            "role": "mv writes onto it",
            "similar": [],
        }
    ]
    for overwrite in (onto_file, into_dir, made_first, two):
        assert overwrite.kind is DecisionKind.VETO
        assert veto_basis(overwrite) == "action"
    # The text alone cannot tell a rename from an overwrite: without looking, it is blocked.
    [blind] = await Lookahead(FunctionWorldModel(lambda t, a: "")).gate(
        TERMINAL, ["mv cedar.txt final.txt"]
    )
    assert blind.kind is DecisionKind.VETO


async def test_unchecked_writes_run_only_onto_paths_seen_free(workspace: Path) -> None:
    def down(trajectory: Trajectory, action: Action) -> str:
        raise ConnectionError("world model down")

    engine = Lookahead(FunctionWorldModel(down), environment=workspace)
    new, existing, copy_new = await engine.gate(
        TERMINAL, ["echo hi > new.txt", "echo hi > cedar.txt", "cp cedar.txt copy.txt"]
    )
    assert new.kind is DecisionKind.UNSIMULATED
    assert new.metadata["unchecked"]["policy"] == "fail_safe"
    assert existing.kind is DecisionKind.VETO
    assert copy_new.kind is DecisionKind.UNSIMULATED
    assert engine.stats.unchecked == 2
