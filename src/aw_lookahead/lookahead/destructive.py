"""Terminal commands whose success itself destroys data.

A world model that predicts ``rm -rf data`` well predicts *nothing* (rm is
silent), so no rule on the observation can see the deletion. These commands
are recognised from the action instead; :class:`~.rules.RuleJudge` flags them
``risky`` when the prediction shows no failure (a predicted failure already
vetoes them). The list is deliberately short: recursive or forced deletion,
history rewrites, raw device writes and SQL drops. Plain ``rm file`` is not
on it, because agents delete their own scratch files all the time.
"""

from __future__ import annotations

import re
import shlex

from aw_lookahead.trajectory import Action

from .routing import terminal_command_text

__all__ = ["destructive_command"]

_SPLIT = re.compile(r"&&|\|\||[;|\n]")
_SQL = re.compile(r"\b(?:drop\s+(?:table|database|schema)|truncate\s+table)\b", re.IGNORECASE)


def _rm(args: list[str]) -> str | None:
    for a in args:
        if a in ("-r", "-R", "--recursive") or (
            a.startswith("-") and not a.startswith("--") and set(a[1:]) & {"r", "R"}
        ):
            return "rm deletes a directory tree recursively"
    return None


def _git(args: list[str]) -> str | None:
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1 :] if sub in args else []
    if sub == "push" and any(
        a in ("-f", "--force", "--mirror", "--delete", "-d")
        or a.startswith("--force")
        or (a.startswith("+") and len(a) > 1)
        for a in rest
    ):
        return "git push rewrites or deletes remote history"
    if sub == "reset" and "--hard" in rest:
        return "git reset --hard discards uncommitted work"
    if sub == "clean" and any(a.startswith("-") and "f" in a.lstrip("-") for a in rest):
        return "git clean -f deletes untracked files"
    if sub == "branch" and any(a in ("-D", "--delete") for a in rest):
        return "git branch -D deletes a branch"
    if sub in ("checkout", "restore") and any(a in (".", "--", "-f", "--force") for a in rest):
        return f"git {sub} overwrites working-tree changes"
    return None


def _segment(words: list[str]) -> str | None:
    while words and ("=" in words[0] or words[0] in ("sudo", "nohup", "time", "command")):
        words = words[1:]
    if not words:
        return None
    name, args = words[0].rsplit("/", 1)[-1], words[1:]
    if name == "rm":
        return _rm(args)
    if name == "git":
        return _git(args)
    if name == "find" and "-delete" in args:
        return "find -delete deletes every match"
    if name in ("shred", "mkfs", "wipefs") or name.startswith("mkfs."):
        return f"{name} destroys data irrecoverably"
    if name == "dd" and any(a.startswith("of=") for a in args):
        return "dd writes raw data over its output"
    if name in ("kill", "pkill", "killall") and any(a in ("-9", "-KILL", "-SIGKILL") for a in args):
        return f"{name} -9 kills processes without letting them clean up"
    return None


def destructive_command(action: Action) -> str | None:
    """Why the terminal action destroys data when it succeeds, or ``None``."""
    text = terminal_command_text(action)
    if not text:
        return None
    if _SQL.search(text):
        return "the SQL drops or truncates a table"
    for segment in _SPLIT.split(text):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        reason = _segment(words)
        if reason:
            return reason
    return None
