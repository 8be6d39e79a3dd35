"""The terminal data generator, run for real in bash sandboxes on tiny task counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aw_lookahead.cli import main
from aw_lookahead.datagen import SPLITS
from aw_lookahead.datagen.terminal import (
    FAMILIES,
    HOME,
    build_task,
    family_order,
    generate_terminal,
    generate_terminal_sync,
    normalise_output,
)
from aw_lookahead.trajectory import Trajectory, read_trajectories


def _read(out: Path) -> dict[str, list[Trajectory]]:
    return {s: list(read_trajectories(out / f"{s}.jsonl")) for s in SPLITS}


def _files(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def every_family(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One task of every family (task i uses family order[i % n_families])."""
    out = tmp_path_factory.mktemp("every-family")
    generate_terminal_sync(len(FAMILIES), seed=11, out=out, workers=2)
    return out


def test_at_least_fifty_families_each_with_three_to_seven_steps() -> None:
    assert len(FAMILIES) >= 50
    for seed in (0, 1):
        order = family_order(seed)
        assert sorted(order) == sorted(FAMILIES)
        for i in range(len(order)):
            name, spec = build_task(seed, i, order)
            assert 3 <= len(spec.steps) <= 7, name
            assert spec.task, name
            assert all(s.command.strip() for s in spec.steps), name
            assert build_task(seed, i, order)[1] == spec, f"{name} is not deterministic"


def test_every_family_runs_and_observations_are_real_and_short(every_family: Path) -> None:
    trajs = [t for items in _read(every_family).values() for t in items]
    manifest = json.loads((every_family / "manifest.json").read_text())
    assert sum(manifest["counts"].values()) == len(trajs)
    assert manifest["extra"]["requested"] == len(FAMILIES)
    # A family whose turns would all be dropped by the warm-up filters is a defect.
    assert {t.metadata["family"] for t in trajs} == set(FAMILIES)
    for t in trajs:
        assert 3 <= len(t.turns) <= 7, t.id
        for turn in t.turns:
            assert turn.observation.startswith("$ "), t.id
            assert "aw-datagen-" not in turn.observation, t.id
            assert len(turn.observation.splitlines()) <= 40, (t.id, turn.observation)
            assert turn.metadata["turn_class"] is not None
            assert not turn.metadata["timed_out"], (t.id, turn.observation)


def test_about_a_third_of_steps_are_mistakes_and_they_fail(every_family: Path) -> None:
    turns = [turn for items in _read(every_family).values() for t in items for turn in t.turns]
    mistakes = [t for t in turns if t.metadata["mistake"]]
    assert 0.25 <= len(mistakes) / len(turns) <= 0.42
    failing = [t for t in mistakes if t.metadata["exit_code"] != 0]
    assert len(failing) / len(mistakes) >= 0.85
    honest = [t for t in turns if not t.metadata["mistake"]]
    assert sum(t.metadata["exit_code"] == 0 for t in honest) / len(honest) >= 0.85


def test_split_is_by_family_and_test_families_are_never_trained_on(every_family: Path) -> None:
    manifest = json.loads((every_family / "manifest.json").read_text())
    data = _read(every_family)
    seen = {s: {str(t.metadata["family"]) for t in data[s]} for s in SPLITS}
    for split in SPLITS:
        assert seen[split] <= set(manifest["splits"][split])
        assert manifest["counts"][split] == len(data[split])
    assert not seen["train"] & (seen["test"] | seen["validation"])
    assert not seen["test"] & seen["validation"]
    assert seen["test"]
    assert seen["validation"]
    listed = [f for s in SPLITS for f in manifest["splits"][s]]
    assert sorted(listed) == sorted(FAMILIES)
    awb = (every_family / "agentworldbench" / "test.jsonl").read_text().splitlines()
    assert len(awb) == sum(len(t.turns) for t in data["test"])
    assert all(
        json.loads(line)["id"].rsplit("-t", 1)[0] in {t.id for t in data["test"]} for line in awb
    )


def test_same_seed_gives_identical_files_whatever_the_workers(tmp_path: Path) -> None:
    generate_terminal_sync(6, seed=3, out=tmp_path / "a", workers=1)
    generate_terminal_sync(6, seed=3, out=tmp_path / "b", workers=3)
    generate_terminal_sync(6, seed=4, out=tmp_path / "c", workers=2)
    a, b, c = (_files(tmp_path / k) for k in "abc")
    assert a == b
    assert a != c
    assert a.keys() == c.keys()


async def test_async_and_blocking_forms_write_the_same_files(tmp_path: Path) -> None:
    await generate_terminal(3, seed=5, out=tmp_path / "a", workers=2)
    generate_terminal_sync(3, seed=5, out=tmp_path / "b", workers=2)  # inside a running loop
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_normalise_output_hides_the_sandbox_dir_and_timings(tmp_path: Path) -> None:
    text = f"File {tmp_path}/x.py\nRan 3 tests in 0.013s\nRan 1 test in 1.5s\n"
    assert normalise_output(text, tmp_path) == (
        f"File {HOME}/x.py\nRan 3 tests in 0.000s\nRan 1 test in 0.000s\n"
    )


def test_cli_writes_the_dataset_and_prints_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "data"
    argv = ["data", "terminal", "--n", "3", "--seed", "2", "--out", str(out), "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    manifest = json.loads(captured.out)
    assert manifest == json.loads((out / "manifest.json").read_text())
    assert manifest["domain"] == "terminal"
    assert manifest["seed"] == 2
    assert sum(manifest["counts"].values()) == 3
    assert "3/3 tasks" in captured.err
    before = {f.name: f.read_bytes() for f in out.glob("*.jsonl")}
    assert main(["data", "terminal", "--n", "1", "--seed", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"aw-lookahead data: error: --out: {out / 'manifest.json'} exists (and 3 more); "
        "pass --force to replace, or choose a new path"
    ]
    assert {f.name: f.read_bytes() for f in out.glob("*.jsonl")} == before  # nothing lost
    argv = ["data", "terminal", "--n", "3", "--seed", "2", "--out", str(out), "--force"]
    assert main(argv) == 0
    assert "wrote 3 trajectories" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--n", "0"], "argument --n: must be at least 1, got 0"),
        (["--n", "many"], "argument --n: expected a whole number, got 'many'"),
        (["--n", "2", "--workers", "0"], "argument --workers: must be at least 1, got 0"),
        (["--n", "2", "--seed", "x"], "argument --seed: expected a whole number, got 'x'"),
    ],
)
def test_bad_arguments_are_one_line_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["data", "terminal", "--out", str(tmp_path / "o"), *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == f"aw-lookahead data terminal: error: {needle}"
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_out_that_is_a_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x\n")
    assert main(["data", "terminal", "--n", "1", "--out", str(target)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"aw-lookahead data: error: --out {target} is a file; give a folder "
                   "(it is created if missing)"]  # fmt: skip
