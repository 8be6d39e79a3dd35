"""Git families: ``mcp-server-git`` confined to a fresh small repository with fixed dates."""

from __future__ import annotations

import os
import random
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from aw_lookahead.datagen.mcp.content import PEOPLE, WORDS, random_files
from aw_lookahead.datagen.mcp.session import Family, Plan, pick, typo
from aw_lookahead.errors import DownstreamError

BASE_DATE = 1_767_225_600  # 2026-01-01T00:00:00Z; commit k is k hours later
BAD_GIT_TOOLS = ("git_push", "git_pull", "git_clone", "git_stash", "git_merge", "git_rebase")


def git_env(author: str, when: int, root: Path) -> dict[str, str]:
    """The environment for git and the git server: fixed identity and dates, no user config.

    The global config is a file beside the repository, never ``/dev/null``:
    git (and GitPython in the server) replace a config file they write by
    renaming a lock file over it, which as root turns ``/dev/null`` into a
    regular file for the whole machine.
    """
    email = f"{author.lower()}@example.com"
    stamp = f"{when} +0000"
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "GIT_CONFIG_GLOBAL": str(root.parent / f".{root.name}.gitconfig"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": author,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_AUTHOR_DATE": stamp,
        "GIT_COMMITTER_DATE": stamp,
        "LC_ALL": "C",
    }


@dataclass
class GitWorkspace:
    """One fresh repository: its files, commit subjects, branches and uncommitted changes."""

    root: Path
    files: dict[str, str]
    subjects: list[str]
    branches: list[str]
    modified: list[str]
    untracked: list[str]
    author: str
    next_date: int

    @property
    def repo(self) -> str:
        return str(self.root)


def _git(root: Path, env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise DownstreamError(f"git {' '.join(args)} failed in {root}: {done.stderr.strip()}")


def make_git_workspace(root: Path, rng: random.Random) -> GitWorkspace:
    """A repository in ``root`` with 2-4 commits, maybe a branch, and uncommitted changes."""
    author = pick(rng, PEOPLE)
    files = random_files(rng, 2, 4)
    names = sorted(files)
    when = BASE_DATE + rng.randrange(0, 300) * 86_400
    _git(root, git_env(author, when, root), "init", "-q")
    subjects: list[str] = []
    for i in range(rng.randrange(2, 5)):
        env = git_env(author, when, root)
        chunk = names[i::2] if i < 2 else [pick(rng, names)]
        for rel in chunk:
            target = root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists():
                files[rel] += f"{pick(rng, WORDS)} = {rng.randrange(100)}\n"
            target.write_text(files[rel], encoding="utf-8")
        if not chunk:
            continue
        subject = f"{pick(rng, ['Add', 'Update', 'Fix', 'Tidy'])} {Path(chunk[0]).stem}"
        _git(root, env, "add", "--", *chunk)
        _git(root, env, "commit", "-q", "-m", subject)
        subjects.append(subject)
        when += 3600
    branches = ["main"]
    if rng.random() < 0.6:
        branch = f"feature/{pick(rng, WORDS)}"
        _git(root, git_env(author, when, root), "branch", branch)
        branches.append(branch)
    modified = [pick(rng, names)] if rng.random() < 0.8 else []
    for rel in modified:
        files[rel] += f"{pick(rng, WORDS)}: {rng.randrange(100)}\n"
        (root / rel).write_text(files[rel], encoding="utf-8")
    untracked = [f"{pick(rng, WORDS)}.txt"] if rng.random() < 0.6 else []
    for rel in untracked:
        if rel not in files:
            files[rel] = f"{pick(rng, WORDS)}\n"
            (root / rel).write_text(files[rel], encoding="utf-8")
    untracked = [u for u in untracked if u not in names]
    return GitWorkspace(root, files, subjects, branches, modified, untracked, author, when)


def _changed(ws: GitWorkspace) -> list[str]:
    return [*ws.modified, *ws.untracked]


def inspect(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Find out what state the repository is in")
    plan.add("git_status", repo_path=ws.repo)
    plan.add("git_log", repo_path=ws.repo, max_count=rng.randrange(1, 4))
    if rng.random() < 0.7:
        plan.add("git_show", True, repo_path=ws.repo, revision=pick(rng, ["HEAD~9", "v1.0", "dev"]))
    else:
        plan.add("git_show", repo_path=ws.repo, revision="HEAD")
    return plan


def stage_commit(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Commit the pending changes")
    plan.add("git_status", repo_path=ws.repo)
    changed = _changed(ws) or [pick(rng, sorted(ws.files))]
    if rng.random() < 0.7:
        misspelt = typo(rng, changed[0])
        if misspelt not in ws.files:
            plan.add("git_add", True, repo_path=ws.repo, files=[misspelt])
    plan.add("git_add", repo_path=ws.repo, files=changed)
    plan.add("git_diff_staged", repo_path=ws.repo, context_lines=rng.randrange(0, 3))
    if _changed(ws):
        plan.add("git_commit", repo_path=ws.repo, message=f"Update {pick(rng, WORDS)}")
        plan.add("git_log", repo_path=ws.repo, max_count=2)
    return plan


def branching(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Start a new branch for the work")
    plan.add("git_branch", repo_path=ws.repo, branch_type="local")
    name = f"fix/{pick(rng, WORDS)}"
    if rng.random() < 0.5:
        plan.add("git_create_branch", True, repo_path=ws.repo, branch_name="main")
    plan.add("git_create_branch", repo_path=ws.repo, branch_name=name)
    if rng.random() < 0.6:
        plan.add("git_checkout", True, repo_path=ws.repo, branch_name=typo(rng, name))
    plan.add("git_checkout", repo_path=ws.repo, branch_name=name)
    plan.add("git_status", repo_path=ws.repo)
    return plan


def diff_refs(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Compare the working tree with earlier versions")
    plan.add("git_diff_unstaged", repo_path=ws.repo)
    target = pick(rng, ws.branches[1:]) if len(ws.branches) > 1 and rng.random() < 0.5 else "HEAD~1"
    if rng.random() < 0.7:
        plan.add(
            "git_diff", True, repo_path=ws.repo, target=pick(rng, ["origin/main", "HEAD~7", "v2"])
        )
    plan.add("git_diff", repo_path=ws.repo, target=target, context_lines=1)
    return plan


def reset(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Stage, review, then unstage everything")
    changed = _changed(ws) or [pick(rng, sorted(ws.files))]
    if rng.random() < 0.7:
        plan.add("git_add", True, repo_path=ws.repo, files=[f"{pick(rng, WORDS)}/{changed[0]}"])
    plan.add("git_add", repo_path=ws.repo, files=changed)
    plan.add("git_diff_staged", repo_path=ws.repo)
    plan.add("git_reset", repo_path=ws.repo)
    plan.add("git_status", repo_path=ws.repo)
    return plan


def commit_nothing(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Save the work in a commit")
    plan.add("git_commit", True, repo_path=ws.repo, message=f"WIP {pick(rng, WORDS)}")
    plan.add("git_status", repo_path=ws.repo)
    if rng.random() < 0.42:
        plan.add("git_add", True, repo_path=ws.repo, files=[])
    if _changed(ws):
        plan.add("git_add", repo_path=ws.repo, files=[_changed(ws)[0]])
        plan.add("git_commit", repo_path=ws.repo, message=f"Save {Path(_changed(ws)[0]).stem}")
    return plan


def outside_repo(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Check the status of the repository")
    wrong = pick(rng, [str(ws.root.parent), "/tmp", "/srv/app", f"{ws.root}-old"])
    plan.add("git_status", True, repo_path=wrong)
    if rng.random() < 0.5:
        plan.add("git_log", True, repo_path=f"{ws.root}/../{pick(rng, WORDS)}")
    plan.add("git_status", repo_path=ws.repo)
    return plan


def bad_calls(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Publish the latest commits")
    plan.add(pick(rng, BAD_GIT_TOOLS), True, repo_path=ws.repo)
    plan.add("git_log", True, repo_path=ws.repo, max_count=pick(rng, ["five", "all", "-"]))
    if rng.random() < 0.5:
        plan.add("git_show", True, repo_path=ws.repo)
    plan.add("git_log", repo_path=ws.repo, max_count=rng.randrange(1, 3))
    return plan


def log_filters(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("List the commits of one day")
    last = ws.next_date - 3600 * rng.randrange(1, 3)
    iso = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(last))
    plan.add("git_log", repo_path=ws.repo, start_timestamp=iso)
    plan.add("git_log", repo_path=ws.repo, end_timestamp="2020-01-01T00:00:00")
    if rng.random() < 0.7:
        plan.add("git_log", True, repo_path=ws.repo, max_count=None)
    plan.add("git_log", repo_path=ws.repo, max_count=1, start_timestamp=iso)
    return plan


def show_history(rng: random.Random, ws: GitWorkspace) -> Plan:
    plan = Plan("Read an older commit")
    plan.add("git_log", repo_path=ws.repo, max_count=len(ws.subjects))
    back = rng.randrange(1, len(ws.subjects)) if len(ws.subjects) > 1 else 0
    plan.add("git_show", repo_path=ws.repo, revision=f"HEAD~{back}")
    if rng.random() < 0.7:
        plan.add("git_show", True, repo_path=ws.repo, revision=f"HEAD~{len(ws.subjects) + 2}")
    if len(ws.branches) > 1:
        plan.add("git_branch", repo_path=ws.repo, branch_type="all")
    return plan


GIT_FAMILIES: tuple[Family, ...] = (
    Family("git.inspect", "git", inspect),
    Family("git.stage_commit", "git", stage_commit),
    Family("git.branching", "git", branching),
    Family("git.diff_refs", "git", diff_refs),
    Family("git.reset", "git", reset),
    Family("git.commit_nothing", "git", commit_nothing),
    Family("git.outside_repo", "git", outside_repo),
    Family("git.bad_calls", "git", bad_calls),
    Family("git.log_filters", "git", log_filters),
    Family("git.show_history", "git", show_history),
)
