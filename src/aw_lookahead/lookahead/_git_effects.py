"""What a ``git`` command destroys: discarded work, deleted refs, rewritten remote history.

Global options before the subcommand (``-C dir``, ``-c key=value``,
``--git-dir=...``, ``--no-pager``...) are skipped, so ``git -C repo push -f``
reads as ``push -f``. Commands that only record or read (``add``, ``commit``,
``status``, a plain ``push``) destroy nothing.
"""

from __future__ import annotations

import re

from ._shell_programs import Effect, Recurse, has_option, operands

__all__ = ["git_effects", "git_subcommand"]

_GLOBAL_VALUE = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")


def git_subcommand(args: list[str]) -> tuple[str, list[str]] | None:
    """``(subcommand, its arguments)`` after git's global options, or ``None``."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GLOBAL_VALUE:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            return a, args[i + 1 :]
    return None


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


_FILEISH = re.compile(r"(?:^|/)\.$|^\.$|\.[A-Za-z][A-Za-z0-9]{0,5}$|/$")


def _push(rest: list[str]) -> list[Effect]:
    if has_option(
        rest,
        "fd",
        ("--force", "--force-with-lease", "--mirror", "--delete", "--prune"),
        value_short="o",
    ):
        return _d("git push rewrites or deletes remote history")
    refs = operands(rest, "o", ("--push-option", "--receive-pack", "--repo", "--exec"))
    if any(r.startswith(("+", ":")) and len(r) > 1 for r in refs[1:]):
        return _d("git push with a +refspec or :ref rewrites or deletes a remote branch")
    return []


def _checkout(rest: list[str]) -> list[Effect]:
    if has_option(rest, "f", ("--force",), value_short="bB"):
        return _d("git checkout -f discards uncommitted changes")
    if "--" in rest and rest[rest.index("--") + 1 :]:
        return _d("git checkout -- <paths> discards uncommitted changes to them")
    ops = operands(rest, "bB", ("--orphan",))
    if has_option(rest, "bB", ("--orphan",)):
        return []
    if any(_FILEISH.search(o) for o in ops):
        return _d("git checkout <path> discards uncommitted changes to it")
    return []


def _restore(rest: list[str]) -> list[Effect]:
    staged_only = has_option(rest, "S", ("--staged",)) and not has_option(
        rest, "W", ("--worktree",)
    )
    return [] if staged_only else _d("git restore discards uncommitted changes")


def git_effects(args: list[str], _r: Recurse) -> list[Effect]:
    found = git_subcommand(args)
    if found is None:
        return []
    sub, rest = found
    if sub == "push":
        return _push(rest)
    if sub == "reset" and has_option(rest, "", ("--hard", "--merge")):
        return _d("git reset --hard discards uncommitted work")
    if sub == "clean":
        if has_option(rest, "n", ("--dry-run",)):
            return []
        if has_option(rest, "f", ("--force",)):
            return _d("git clean -f deletes untracked files")
        return []
    if sub == "checkout":
        return _checkout(rest)
    if sub == "restore":
        return _restore(rest)
    if sub == "switch" and has_option(rest, "f", ("--force", "--discard-changes")):
        return _d("git switch --discard-changes discards uncommitted changes")
    if sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        return _d(f"git stash {rest[0]} deletes stashed work")
    if sub == "branch" and has_option(rest, "dD", ("--delete",)):
        return _d("git branch -d/-D deletes a branch")
    if sub == "tag" and has_option(rest, "d", ("--delete",)):
        return _d("git tag -d deletes a tag")
    if sub == "rm" and not has_option(rest, "n", ("--cached", "--dry-run")):
        return _d("git rm deletes files from the working tree")
    if sub == "worktree" and rest[:1] == ["remove"]:
        return _d("git worktree remove deletes a working tree")
    if sub == "update-ref" and has_option(rest, "d"):
        return _d("git update-ref -d deletes a ref")
    if sub == "reflog" and rest[:1] in (["expire"], ["delete"]):
        return _d("git reflog expire drops the history that recovers lost work")
    if sub == "gc" and any(a.startswith("--prune") for a in rest):
        return _d("git gc --prune deletes unreachable objects")
    if sub in ("prune", "filter-branch", "filter-repo"):
        return _d(f"git {sub} deletes or rewrites history")
    return []
