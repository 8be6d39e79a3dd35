"""What a ``git`` command destroys: discarded work, deleted refs, rewritten remote history.

Global options before the subcommand (``-C dir``, ``-c key=value``,
``--git-dir=...``, ``--no-pager``...) are read by :func:`split_git` from one
list (:data:`GIT_GLOBAL_OPTIONS`, which the read-only router uses too), so
``git -C repo push -f`` reads as ``push -f`` and every ``-c`` setting is
judged. Commands that only record or read (``add``, ``commit``, ``status``, a
plain ``push``) destroy nothing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ._shell_programs import Effect, Recurse, has_option, operands

__all__ = ["GIT_GLOBAL_OPTIONS", "GitCall", "GitOption", "git_effects", "split_git"]


class GitOption(NamedTuple):
    """One of git's global options (those before the subcommand)."""

    takes_value: bool
    """The next word is its value (a long one also takes ``--name=value``)."""
    read_only: bool
    """Changes nothing and runs nothing by itself (allowed before a read-only subcommand)."""


GIT_GLOBAL_OPTIONS: dict[str, GitOption] = {
    "-C": GitOption(takes_value=True, read_only=True),
    "--git-dir": GitOption(takes_value=True, read_only=True),
    "--work-tree": GitOption(takes_value=True, read_only=True),
    "-c": GitOption(takes_value=True, read_only=False),
    "--config-env": GitOption(takes_value=True, read_only=False),
    "--namespace": GitOption(takes_value=True, read_only=False),
    "--no-pager": GitOption(takes_value=False, read_only=True),
    "-P": GitOption(takes_value=False, read_only=True),
    "--no-optional-locks": GitOption(takes_value=False, read_only=True),
    "--bare": GitOption(takes_value=False, read_only=True),
}
"""git's global options, the one list both readers of ``git`` use (the effect rules here
and the read-only router). An option not listed is read as a flag without a value, and
is not read-only."""


@dataclass(frozen=True)
class GitCall:
    """A ``git`` command line: its global options, then the subcommand and its arguments."""

    options: tuple[tuple[str, str | None], ...]
    """``(option, value)`` for each global option as written (``value`` ``None`` for a flag,
    or for a value the text does not give)."""
    subcommand: str | None
    rest: list[str]


def split_git(args: Sequence[str]) -> GitCall:
    """Read git's arguments: the global options (:data:`GIT_GLOBAL_OPTIONS`), then the
    subcommand (``None`` when there is none) and its arguments."""
    options: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("-"):
            return GitCall(tuple(options), a, list(args[i + 1 :]))
        name, eq, value = a.partition("=") if a.startswith("--") else (a, "", "")
        known = GIT_GLOBAL_OPTIONS.get(name)
        if known is not None and known.takes_value and eq:
            options.append((name, value))
            i += 1
        elif known is not None and known.takes_value:
            options.append((name, args[i + 1] if i + 1 < len(args) else None))
            i += 2
        else:
            options.append((a, None))
            i += 1
    return GitCall(tuple(options), None, [])


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


# Settings whose value is a command git runs, and settings that make git run code from files.
_RUNS = re.compile(
    r"^(?:core\.(?:fsmonitor|pager|sshcommand|editor|askpass|gitproxy)|sequence\.editor"
    r"|diff\.external|diff\.[^.]+\.(?:command|textconv)|(?:diff|merge)tool\.[^.]+\.cmd"
    r"|merge\.[^.]+\.driver|filter\.[^.]+\.(?:clean|smudge|process)|credential(?:\..+)?\.helper"
    r"|gpg(?:\.[^.]+)?\.program|pager\.[^.]+|alias\.[^.]+|uploadpack\.packobjectshook"
    r"|remote\.[^.]+\.(?:uploadpack|receivepack)|web\.browser|(?:browser|man)\.[^.]+\.(?:cmd|path)"
    r"|sendemail\.(?:tocmd|cccmd|smtpserver)|ssh\.variant|core\.hookspath)$",
    re.IGNORECASE,
)
_LOADS = re.compile(
    r"^(?:core\.hookspath|include\.path|includeif\..+\.path|protocol\.[^.]+\.allow"
    r"|core\.attributesfile|core\.worktree|gpg\.program)$",
    re.IGNORECASE,
)


def setting_effects(key: str, value: str, r: Recurse) -> list[Effect]:
    """Effects of the git setting ``key=value`` when ``key`` names a program to run."""
    if _LOADS.match(key):
        return _d(f"git setting {key} runs code the text does not show")
    if not _RUNS.match(key):
        return []
    if "\x00" in value and not value.replace("\x00", "").strip(" !"):
        return _d(f"git setting {key} runs a command the text does not show")
    if key.lower().startswith("alias.") and not value.startswith("!"):
        try:
            words = shlex.split(value)
        except ValueError:
            words = value.split()
        return [
            Effect(e.severity, f"git alias {key[6:]}: {e.reason}") for e in git_effects(words, r)
        ]
    return [Effect(e.severity, f"git {key} runs: {e.reason}") for e in r.code(value.lstrip("!"))]


def _settings(options: Sequence[tuple[str, str | None]], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for name, value in options:
        if name == "-c" and value is not None:
            key, _, setting = value.partition("=")
            out += setting_effects(key, setting, r)
        elif name == "--config-env":
            key = (value or "").split("=", 1)[0]
            if _RUNS.match(key) or _LOADS.match(key):
                out += _d(f"git --config-env {key} runs a command the text does not show")
    return out


def _config(rest: list[str], r: Recurse) -> list[Effect]:
    ops = operands(rest, "f", ("--file", "--blob", "--type", "--default", "--comment"))
    if ops[:1] in (["set"], ["add"]):
        ops = ops[1:]
    if len(ops) >= 2:
        return setting_effects(ops[0], ops[1], r)
    if has_option(rest, "", ("--edit",)):
        return _d("git config --edit runs an editor on the configuration")
    return []


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


def git_effects(args: list[str], r: Recurse) -> list[Effect]:
    call = split_git(args)
    settings = _settings(call.options, r)
    if call.subcommand is None:
        return settings
    return settings + _subcommand(call.subcommand, call.rest, r)


def _subcommand(sub: str, rest: list[str], r: Recurse) -> list[Effect]:
    if sub == "config":
        return _config(rest, r)
    if sub == "branch" and has_option(rest, "fMC", ("--force",)):
        return _d("git branch -f/-M/-C moves or replaces a branch, losing its commits")
    if sub == "checkout" and has_option(rest, "B"):
        return _d("git checkout -B resets a branch, losing its commits")
    if sub == "remote" and rest[:1] in (["remove"], ["rm"], ["prune"]):
        return _d(f"git remote {rest[0]} deletes a remote and its branches")
    if sub == "symbolic-ref" and has_option(rest, "d", ("--delete",)):
        return _d("git symbolic-ref -d deletes a ref")
    if sub == "notes" and rest[:1] in (["remove"], ["prune"]):
        return _d(f"git notes {rest[0]} deletes notes")
    if sub == "worktree" and rest[:1] == ["prune"]:
        return _d("git worktree prune deletes working-tree records")
    if sub == "submodule" and rest[:1] == ["deinit"]:
        return _d("git submodule deinit removes a submodule's working tree")
    if sub == "lfs" and rest[:1] == ["prune"]:
        return _d("git lfs prune deletes local LFS objects")
    if sub == "update-ref" and not has_option(rest, "", ("--stdin",)) and len(operands(rest)) >= 2:
        return _d("git update-ref moves a ref, which can lose commits")
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
