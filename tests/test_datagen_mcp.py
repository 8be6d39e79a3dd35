"""``aw-lookahead data mcp``: trajectories recorded from real filesystem, git, memory servers."""

from __future__ import annotations

import fcntl
import json
import random
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.cli import main
from aw_lookahead.datagen.mcp import MCP_FAMILIES, families_for, generate_mcp_sync, record_mcp
from aw_lookahead.datagen.mcp.servers import npm_mcp_server
from aw_lookahead.datagen.mcp.session import typo
from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead import Outcome, RuleJudge
from aw_lookahead.trajectory import Trajectory, read_trajectories
from aw_lookahead.worldmodel import Prediction

ALL = len(MCP_FAMILIES)  # round-robin: the first ALL trajectories cover every family once


@pytest.fixture(scope="module")
def node_prefix(mcp_fs_server: Path, mcp_memory_server: Path, mcp_git_server: Path) -> Path:
    """The npm prefix once all three real servers are installed (else skipped outside CI)."""
    return mcp_fs_server.parents[2]  # <prefix>/node_modules/.bin/mcp-server-filesystem


@pytest.fixture(scope="module")
def dataset(
    node_prefix: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, dict[str, Any]]:
    """One CLI run over every family: (output folder, work folder, --json manifest)."""
    base = tmp_path_factory.mktemp("mcpdata")
    out, work = base / "out", base / "work"
    argv = ["data", "mcp", "--n", str(ALL), "--seed", "7", "--out", str(out)]
    argv += ["--workdir", str(work), "--node-prefix", str(node_prefix), "--json"]
    code, stdout, stderr = _run_cli(argv)
    assert code == 0, stderr
    assert f"{ALL}/{ALL} trajectories" in stderr  # progress
    return out, work, json.loads(stdout)


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's usage errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def _load(out: Path) -> dict[str, list[Trajectory]]:
    return {s: list(read_trajectories(out / f"{s}.jsonl")) for s in ("train", "validation", "test")}


@pytest.mark.integration
def test_every_family_runs_against_its_real_server(
    dataset: tuple[Path, Path, dict[str, Any]],
) -> None:
    out, _, manifest = dataset
    trajectories = [t for items in _load(out).values() for t in items]
    assert len(trajectories) == ALL == sum(manifest["counts"].values())
    assert {t.metadata["family"] for t in trajectories} == {f.name for f in MCP_FAMILIES}
    tool_names = {
        "filesystem": {"read_text_file", "write_file", "edit_file", "list_allowed_directories"},
        "git": {"git_status", "git_log", "git_commit", "git_show"},
        "memory": {"create_entities", "read_graph", "search_nodes"},
    }
    for traj in trajectories:
        assert traj.domain == "mcp"
        assert 2 <= len(traj.turns) <= 6, traj.metadata
        listed = {t["name"] for t in traj.tools or []}
        assert tool_names[traj.metadata["server"]] <= listed
        assert all("inputSchema" in t for t in traj.tools or [])
        for turn in traj.turns:
            assert isinstance(turn.action, dict)
            assert set(turn.action) == {"name", "arguments"}
            assert turn.observation.strip()
            # each family's deliberate mistakes, and only those, fail on the real server
            assert turn.metadata["is_error"] == turn.metadata["planned_error"], (traj.id, turn)
            if turn.metadata["is_error"]:
                assert turn.observation.lower().startswith("error"), turn.observation


@pytest.mark.integration
async def test_errors_read_as_failures_to_the_rule_verifier(
    dataset: tuple[Path, Path, dict[str, Any]],
) -> None:
    """The training targets agree with the MCP rules lookahead applies to predictions."""
    out, _, _ = dataset
    judge = RuleJudge()
    for traj in (t for items in _load(out).values() for t in items):
        for turn in traj.turns:
            pred = Prediction(action=turn.action, observation=turn.observation)
            verdict = await judge.judge(traj, turn.action, pred)
            failed = verdict.outcome is Outcome.FAILURE
            assert failed == turn.metadata["is_error"], (traj.id, turn.observation[:200])


@pytest.mark.integration
def test_split_is_by_family_and_every_server_is_tested(
    dataset: tuple[Path, Path, dict[str, Any]],
) -> None:
    out, _, manifest = dataset
    splits = manifest["splits"]
    seen: dict[str, str] = {}
    for split, families in splits.items():
        for family in families:
            assert family not in seen, f"{family} in {seen.get(family)} and {split}"
            seen[family] = split
    for split, items in _load(out).items():
        assert all(seen[t.metadata["family"]] == split for t in items)
        assert manifest["counts"][split] == len(items)
    for server in ("fs.", "git.", "memory."):
        assert any(f.startswith(server) for f in splits["test"]), splits["test"]
        assert any(f.startswith(server) for f in splits["train"]), splits["train"]
    share = manifest["extra"]["error_share"]
    assert 0.2 <= share <= 0.5, share
    assert manifest["extra"]["failed"] == []


@pytest.mark.integration
async def test_same_seed_same_trajectories(
    dataset: tuple[Path, Path, dict[str, Any]], node_prefix: Path
) -> None:
    out, work, _ = dataset
    first = {t.id: t for items in _load(out).values() for t in items}
    again, failed = await record_mcp(ALL, 7, workdir=work, node_prefix=node_prefix)
    assert not failed
    assert [t.id for t in again] == sorted(first)
    for traj in again:
        if traj.metadata["deterministic"]:
            assert traj == first[traj.id], traj.metadata["family"]
    seven, _ = await record_mcp(3, 7, servers=["memory"], workdir=work, node_prefix=node_prefix)
    eight, _ = await record_mcp(3, 8, servers=["memory"], workdir=work, node_prefix=node_prefix)
    assert [t.turns for t in seven] != [t.turns for t in eight]


@pytest.mark.integration
async def test_one_server_only(node_prefix: Path, tmp_path: Path) -> None:
    trajs, _ = await record_mcp(
        2, 1, servers=["git"], workdir=tmp_path / "w", node_prefix=node_prefix
    )
    assert {t.metadata["server"] for t in trajs} == {"git"}
    assert all(t.tools and t.tools[0]["name"].startswith("git_") for t in trajs)
    assert not list((tmp_path / "w").glob("*-[0-9]*")), "trajectory folders are removed"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--servers", "filesystem,ftp"], "unknown MCP server ftp; choose from"),
        (["--n", "0"], "argument --n: must be at least 1, got 0"),
        (["--workers", "0"], "argument --workers: must be at least 1, got 0"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    tmp_path: Path, argv: list[str], message: str
) -> None:
    base = ["data", "mcp", "--n", "1", "--out", str(tmp_path / "o"), "--workdir", str(tmp_path)]
    code, _out, err = _run_cli([*base, *argv])
    assert code == 2
    assert message in err.strip().splitlines()[-1], err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "file.jsonl"
    target.write_text("")
    code, _, err = _run_cli(["data", "mcp", "--n", "1", "--out", str(target)])
    assert code == 2
    assert "is a file" in err
    assert err.count("\n") == 1


@pytest.mark.integration
async def test_a_busy_workdir_is_refused(node_prefix: Path, tmp_path: Path) -> None:
    (tmp_path / ".lock").touch()
    with (tmp_path / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(ConfigError, match="another run is using the work folder"):
            await record_mcp(1, 0, servers=["memory"], workdir=tmp_path, node_prefix=node_prefix)


@pytest.mark.integration
async def test_the_blocking_twin_works_inside_a_running_loop(
    mcp_memory_server: Path, tmp_path: Path
) -> None:
    prefix = mcp_memory_server.parents[2]
    manifest = generate_mcp_sync(
        2, 3, tmp_path / "out", servers=["memory"], workdir=tmp_path / "w", node_prefix=prefix
    )
    assert sum(manifest.counts.values()) == 2
    assert manifest.extra["servers"] == ["memory"]


def test_the_blocking_twin_refuses_bad_arguments_as_the_async_one_does(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown MCP server ftp"):
        generate_mcp_sync(1, 0, tmp_path / "out", servers=["ftp"], workdir=tmp_path)


def test_missing_npm_server_names_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="npm install --prefix"):
        npm_mcp_server("@modelcontextprotocol/server-memory", tmp_path, install=False)


def test_unknown_server_lists_the_choices() -> None:
    with pytest.raises(ConfigError, match="filesystem, git, memory"):
        families_for(["svn"])
    assert len(MCP_FAMILIES) >= 20
    assert len({f.name for f in MCP_FAMILIES}) == len(MCP_FAMILIES)


def test_typo_always_changes_the_name() -> None:
    rng = random.Random(0)
    for name in ["a.txt", "ab", "config.ini", "notes/todo.md", "Ada", "feature/queue", "xyz"]:
        for _ in range(50):
            assert typo(rng, name) != name
