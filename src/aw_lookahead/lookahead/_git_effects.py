"""What a ``git`` command destroys: discarded work, deleted refs, rewritten remote history.

Global options before the subcommand (``-C dir``, ``-c key=value``,
``--git-dir=...``, ``--no-pager``...) are skipped, so ``git -C repo push -f``
reads as ``push -f``. Commands that only record or read (``add``, ``commit``,
``status``, a plain ``push``) destroy nothing.
"""

from __future__ import annotations

import re
import shlex

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


def _settings(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for i, a in enumerate(args):
        if a == "-c" and i + 1 < len(args):
            key, _, value = args[i + 1].partition("=")
            out += setting_effects(key, value, r)
        elif a.startswith("--config-env"):
            pair = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            key = pair.split("=", 1)[0]
            if _RUNS.match(key) or _LOADS.match(key):
                out += _d(f"git --config-env {key} runs a command the text does not show")
        elif not a.startswith("-"):
            break
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
    found = git_subcommand(args)
    settings = _settings(args, r)
    if found is None:
        return settings
    sub, rest = found
    return settings + _subcommand(sub, rest, r)


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
