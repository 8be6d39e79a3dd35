"""Grounded lookahead: what an action needs, observed read-only on a real folder tree.

Each case builds a small real workspace, asks :class:`LocalEnvironment` about one
shell text, and checks what was found missing (or that nothing was: a form whose
failure the text handles, or whose inputs it may create first, is never missing).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.lookahead.environment import (
    LocalEnvironment,
    Observation,
    as_environment,
)
from aw_lookahead.trajectory import Trajectory

TERMINAL = Trajectory(domain="terminal")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "cedar.txt").write_text("cedar\n")
    (root / "scores.csv").write_text("a,1\n")
    (root / "double.py").write_text("print(2)\n")
    (root / "run.sh").write_text("echo hi\n")
    (root / "data").mkdir()
    (root / "data" / "a.txt").write_text("alpha\n")
    (root / "cfg").mkdir()
    (root / "cfg" / "app.conf").write_text("x=1\n")
    (root / "Makefile").write_text("build:\n\techo b\ntest: build\n\techo t\n.PHONY: build test\n")
    (root / "site.tgz").write_bytes(b"\x1f\x8b")
    return root


def look(root: Path, text: str, trajectory: Trajectory = TERMINAL) -> Observation:
    found = asyncio.run(LocalEnvironment(root).observe(trajectory, text))
    assert found is not None
    return found


MISSING = [
    # (text, missing subject, a did-you-mean it must offer or None)
    ("cat cdear.txt", "cdear.txt", "cedar.txt"),
    ("cat cfg/app.cfg", "cfg/app.cfg", "cfg/app.conf"),
    ("cat cgf/app.conf", "cgf/app.conf", "cfg/app.conf"),
    ("sort scroes.csv", "scroes.csv", "scores.csv"),
    ("python3 dobule.py 4", "dobule.py", "double.py"),
    ("bash rnu.sh", "rnu.sh", "run.sh"),
    ("cta cedar.txt", "cta", "cat"),
    ("grpe alpha data/a.txt", "grpe", "grep"),
    ("wc -l < yarow.txt", "yarow.txt", None),
    ("grep -n alpha data/b.txt", "data/b.txt", "data/a.txt"),
    ("sed -i 's/a/b/' ravne.py", "ravne.py", None),
    ("cd dta", "dta", "data"),
    ("cd cedar.txt", "cedar.txt", None),
    ("echo hi > logs/app.log", "logs/app.log", None),
    ("cp cedar.txt backup/", "backup/", None),
    ("mv cedar.txt archive/old/cedar.txt", "archive/old/cedar.txt", None),
    ("touch build/stamp", "build/stamp", None),
    ("mkdir data", "data", None),
    ("make biuld", "biuld", "build"),
    ("tar -xzf stie.tgz", "stie.tgz", "site.tgz"),
    ("ls data\ncedar.log\nb.txt", "cedar.log", "cedar.txt"),
    ("ls && cat data/a.txt && cat data/c.txt", "data/c.txt", "data/a.txt"),
    ("./rnu.sh", "./rnu.sh", None),
    ("head -n 2 nope.txt | sort", "nope.txt", None),
    ("sudo cat cdear.txt", "cdear.txt", "cedar.txt"),
    ("wc -l dtaa/*.txt", "dtaa/*.txt", None),
    ("cat data/*.csv", "data/*.csv", None),
    ("find data dtaa -name '*.txt'", "dtaa", "data"),
    ("./data/a.txt", "./data/a.txt", None),  # not executable
    ("tar -czf out.tgz dta", "dta", "data"),
    ("rm data", "data", None),  # a folder, without -r
    ("readlink latset", "latset", None),
    ("timeout 5 grep x cdear.txt", "cdear.txt", "cedar.txt"),
    ("ln -s cedar.txt", "cedar.txt", None),  # the link would be ./cedar.txt: taken
    ("ln cdear.txt hard.txt", "cdear.txt", "cedar.txt"),  # a hard link needs its target
    ("ln -s cedar.txt links/c.txt", "links/c.txt", None),
]


@pytest.mark.parametrize(("text", "subject", "hint"), MISSING)
def test_a_need_observed_missing_decides(
    workspace: Path, text: str, subject: str, hint: str | None
) -> None:
    seen = look(workspace, text)
    assert seen.missing is not None, seen
    assert seen.missing.subject == subject
    if hint is not None:
        assert hint in seen.missing.similar
        assert f"did you mean `{hint}`" in seen.explanation() or hint in seen.explanation()
    assert subject.rstrip("/").split("/")[-1] in seen.explanation()


FINE = [
    "cat cedar.txt",
    "cat x 2>/dev/null || echo none",  # the text handles the failure
    "test -f nope.txt && cat nope.txt",
    "[ -e nope.txt ] || touch nope.txt",
    "if [ -f nope.txt ]; then cat nope.txt; fi",
    "cat nope.txt || echo missing",
    "git init -q repo && cd repo && git status",  # made first
    "mkdir -p out/logs && echo hi > out/logs/app.log",
    "mkdir out && cp cedar.txt out/",
    "touch new.txt && cat new.txt",
    "echo x > new.txt; cat new.txt",
    "cp cedar.txt cedar2.txt && cat cedar2.txt",
    "mv cedar.txt renamed.txt",
    "tar -czf out.tgz data",
    "grep -r alpha .",
    "grep -e cedar -- cedar.txt",
    "awk -F, '{print $1}' scores.csv",
    "make build",
    "make",
    "ls -la data/",
    "find . -name '*.txt'",
    "cat *.txt",  # a glob is never a need
    "cat $FILE",  # nor an expansion
    "rm -f nope.txt",
    "f() { cat nope.txt; }; echo defined",
    "python3 -c 'print(1)'",
    "python3 -m http.server --help",
    "pip install foo && foo --version",  # made by a program whose effects are not read
    "cd data && cat a.txt",
    "cat ~/nothing-here.txt",  # home is not given: unknown
    "cat /etc/hostname-not-here",  # outside the root: unknown
    "gunzip site",  # gunzip also tries site.gz? no: .gz only; site.tgz does not count
    "cat data/*.txt",  # the glob matches
    "ls data/a.t?t",
    "find data -name '*.txt' -delete",
    "bash run.sh",
    "rm -r data",
    "tar -czf out.tgz data cedar.txt",
    "ln -s cedar.txt latest && cat latest",
    "ln -s nowhere.txt dangling",  # a symbolic link's target may be missing
    "ln -sf cedar.txt data/a.txt",  # replaces: not read
    "ln -s data/a.txt",
]


@pytest.mark.parametrize("text", FINE)
def test_what_the_text_may_make_or_guard_is_never_missing(workspace: Path, text: str) -> None:
    if text == "gunzip site":
        (workspace / "site.gz").write_bytes(b"\x1f\x8b")
    seen = look(workspace, text)
    assert seen.missing is None, (text, seen.missing)


def test_functions_aliases_and_path_of_the_session_are_not_vetoed(workspace: Path) -> None:
    history = TERMINAL.with_turn("alias ll='ls -l'", "")
    assert look(workspace, "ll", history).missing is None
    assert look(workspace, "export PATH=$PATH:./bin && mytool").missing is None
    assert look(workspace, "mytool").missing is not None


def test_the_model_is_shown_the_folder_and_the_named_paths(workspace: Path) -> None:
    seen = look(workspace, "wc -l cedar.txt data/a.txt")
    text = seen.state_text()
    assert "cedar.txt" in text
    assert "data/" in text
    assert "`data/a.txt`: file, 6 bytes" in text
    assert "program `wc`" in text


def test_a_symlink_out_of_the_root_is_not_followed(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "link").symlink_to(outside)
    seen = look(workspace, "cat link/secret.txt")
    assert seen.missing is None
    assert not seen.complete


def test_git_refs_are_read_from_the_repository(workspace: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "cedar.txt"],
        ["git", "commit", "-qm", "one"],
        ["git", "branch", "feature-login"],
    ):
        subprocess.run(cmd, cwd=workspace, check=True, env=env)
    missing = look(workspace, "git checkout feature-logn").missing
    assert missing is not None
    assert missing.kind == "ref"
    assert "feature-login" in missing.similar
    assert look(workspace, "git checkout feature-login").missing is None
    assert look(workspace, "git checkout -b feature-new").missing is None
    assert look(workspace, "git switch -qc topic && git commit -qm x").missing is None
    assert look(workspace, "git checkout HEAD~1").missing is None
    assert look(workspace, "git checkout cedar.txt").missing is None
    subprocess.run(["git", "pack-refs", "--all"], cwd=workspace, check=True, env=env)
    assert look(workspace, "git switch feature-login").missing is None


def test_no_makefile_is_missing(workspace: Path) -> None:
    (workspace / "Makefile").unlink()
    missing = look(workspace, "make").missing
    assert missing is not None
    assert missing.kind == "target"
    assert "no makefile" in look(workspace, "make").explanation()


def test_other_domains_are_not_read(workspace: Path) -> None:
    mcp = Trajectory(domain="mcp")
    assert (
        asyncio.run(LocalEnvironment(workspace).observe(mcp, {"name": "x", "arguments": {}}))
        is None
    )


def test_as_environment_takes_a_folder_and_refuses_anything_else(workspace: Path) -> None:
    assert isinstance(as_environment(str(workspace)), LocalEnvironment)
    assert as_environment(None) is None
    with pytest.raises(ConfigError, match="not a folder"):
        as_environment(workspace / "cedar.txt")
    with pytest.raises(ConfigError, match="Environment"):
        as_environment(42)  # type: ignore[arg-type]


def _gnu_cat() -> bool:
    from aw_lookahead.lookahead.environment.files import gnu_long_options, which

    cat = which("cat", os.environ.get("PATH", ""))
    return cat is not None and gnu_long_options(cat) is not None


gnu_only = pytest.mark.skipif(not _gnu_cat(), reason="needs GNU coreutils (read from /usr/bin)")


@gnu_only
@pytest.mark.parametrize(
    ("text", "option", "hint"),
    [
        ("cat --numbr cedar.txt", "--numbr", "--number"),
        ("mv --forse cedar.txt b.txt", "--forse", "--force"),
        ("wc --lines-only cedar.txt", "--lines-only", None),
        ("ls --colr=auto data", "--colr", "--color"),
        ("grep -n alpha data/a.txt --recursve", "--recursve", "--recursive"),
    ],
)
def test_a_long_option_the_gnu_tool_does_not_know_is_missing(
    workspace: Path, text: str, option: str, hint: str | None
) -> None:
    seen = look(workspace, text)
    assert seen.missing is not None, seen
    assert seen.missing.kind == "option"
    assert seen.missing.subject == option
    said = seen.explanation()
    assert f"has no option `{option}`" in said
    if hint is not None:
        assert f"did you mean `{hint}`" in said


@gnu_only
@pytest.mark.parametrize(
    "text",
    [
        "cat --number cedar.txt",
        "cat --num cedar.txt",  # getopt takes an unambiguous prefix
        "tar --gzip -cf out.tgz data",  # named only inside a longer string of tar's file
        "ls --color=auto data",
        "grep -e --numbr cedar.txt",  # the value of -e, not an option
        "sort --numeric-sort --reverse scores.csv",
        "bash --norc run.sh",  # not a tool whose options are read
    ],
)
def test_long_options_the_tool_knows_or_that_are_values_are_fine(
    workspace: Path, text: str
) -> None:
    assert look(workspace, text).missing is None, text


@gnu_only
def test_every_long_option_the_tools_document_is_known() -> None:
    import re
    import shutil

    from aw_lookahead.lookahead.environment.files import unknown_long_option

    checked, unknown = 0, []
    for prog in [
        "cat",
        "ls",
        "cp",
        "mv",
        "rm",
        "wc",
        "head",
        "tail",
        "sort",
        "cut",
        "ln",
        "du",
        "mkdir",
        "touch",
        "grep",
        "sed",
        "tar",
    ]:
        path = shutil.which(prog)
        assert path is not None
        helped = subprocess.run([path, "--help"], capture_output=True, text=True, check=True)
        for option in set(re.findall(r"--([a-z][a-z0-9-]+)", helped.stdout)):
            checked += 1
            if unknown_long_option(path, option) is not None:
                unknown.append((prog, option))
    assert checked > 300
    assert unknown == []
