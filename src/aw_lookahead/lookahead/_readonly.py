"""Is a shell line read-only? The conservative classifier behind ``simulate="risky"``.

The line is parsed by the same bash grammar as the effect classifier
(:mod:`.shell_parse`). It is read-only only when it parses, and every simple
command of every pipeline and list is a program on the allow list, called by
its bare name, with no flag from that program's write/exec list, and the line
has no redirection (other than to ``/dev/null``), command or process
substitution, background job, assignment, loop, conditional, group,
subshell or function, and no ``tee``/``xargs``/``eval``/``sh -c`` (those are
simply not on the allow list). Anything not understood is "may write": a
false "may write" costs one simulation, a false "read-only" lets a writer run
unchecked.

Per-program rules read options with the effect rules' reader
(:func:`._shell_programs.first_option`): clusters the way getopt does
(``-uo f`` is ``-u -o f``), and long options by any prefix GNU ``getopt_long``
accepts (``sort --o=f`` is ``--output=f``, ``date --s=...`` is ``--set``), so
a writing option is seen however it is abbreviated. A run-time expansion in an
argument is allowed only for programs without such flags (``cat "$f"``, not
``sort $opts``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ._git_effects import GIT_GLOBAL_OPTIONS, split_git
from ._shell_programs import first_option, short_letters
from .shell_parse import DYN, PROC, parse_script

__all__ = ["is_read_only_command"]

ReadOnlyCheck = Callable[[list[str]], str | None]


def _plain(_: list[str]) -> str | None:
    return None


def _banned(short: str = "", long: tuple[str, ...] = (), takes_value: str = "") -> ReadOnlyCheck:
    def rule(args: list[str]) -> str | None:
        bad = first_option(args, short, long, takes_value)
        return f"option {bad!r} writes files or runs programs" if bad else None

    return rule


def _no_operands(allowed_short: str, allowed_long: tuple[str, ...] = ()) -> ReadOnlyCheck:
    """Only the listed flags and no operands (``hostname x`` sets the host name)."""

    def rule(args: list[str]) -> str | None:
        for a in args:
            if a.startswith("--"):
                if a.split("=", 1)[0] not in allowed_long:
                    return f"option {a!r} is not known to be read-only"
            elif a.startswith("-") and len(a) > 1:
                if not set(a[1:]) <= set(allowed_short):
                    return f"option {a!r} is not known to be read-only"
            else:
                return f"operand {a!r} may change settings"
        return None

    return rule


def _date(args: list[str]) -> str | None:
    bad = first_option(args, "s", ("--set",), "dfrI")
    if bad:
        return f"date {bad} sets the clock"
    values = {
        i + 1
        for i, a in enumerate(args)
        if a in ("-d", "-f", "-r", "--date", "--file", "--reference")
    }
    for i, a in enumerate(args):
        if not a.startswith(("-", "+")) and i not in values:
            return f"date {a} sets the clock"
    return None


def _uniq(args: list[str]) -> str | None:
    positional = [a for a in args if not a.startswith("-")]
    return "uniq with an output file writes it" if len(positional) > 1 else None


_FIND_WRITERS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def _find(args: list[str]) -> str | None:
    bad = next((a for a in args if a in _FIND_WRITERS), None)
    return f"find {bad} acts on files or runs programs" if bad else None


# A sed script we can read: addresses, then p d q n = l and s/// with plain flags (delimiter /).
_SED_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)"
_SED_CMD = (
    r"(?:[pdqQnNlz=gGhHx]|s/(?:[^/\\\n]|\\.)*/(?:[^/\\\n]|\\.)*/[gpiI0-9]*|y/[^/\n]*/[^/\n]*/)"
)
_SED_SAFE = re.compile(
    rf"^(?:\s*(?:{_SED_ADDR}(?:\s*,\s*{_SED_ADDR})?)?\s*!?\s*{_SED_CMD}\s*(?:;|\n|$))+\s*$"
)


def _sed(args: list[str]) -> str | None:
    scripts: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "--expression"):
            if i + 1 >= len(args):
                return "sed -e without a script"
            scripts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif a.startswith("--"):
            if a.split("=", 1)[0] not in ("--quiet", "--silent", "--regexp-extended", "--posix"):
                return f"sed {a} is not known to be read-only"
        elif a.startswith("-") and len(a) > 1:
            letters = short_letters(a, "el")
            if not set(letters) <= set("nErsuz") | {"e"}:
                return f"sed {a} may edit files in place or read a script file"
            if "e" in letters:
                rest = a[a.index("e") + 1 :]
                if rest:
                    scripts.append(rest)
                elif i + 1 < len(args):
                    scripts.append(args[i + 1])
                    i += 1
        else:
            operands.append(a)
        i += 1
    if not scripts:
        if not operands:
            return "sed without a script"
        scripts.append(operands[0])
    for script in scripts:
        if not _SED_SAFE.match(script):
            return "sed script is not a plain print/substitute script (w, e, r write or run)"
    return None


# git: read-only subcommands and forbidden options (global options: GIT_GLOBAL_OPTIONS).
_GIT_READ = frozenset(
    {
        "status",
        "log",
        "diff",
        "show",
        "rev-parse",
        "ls-files",
        "blame",
        "describe",
        "shortlog",
        "grep",
        "ls-tree",
        "cat-file",
    }
)
_GIT_LISTING = frozenset({"branch", "tag", "remote"})
_GIT_LIST_FLAGS = frozenset({"-a", "-r", "-v", "-vv", "--all", "--list", "-l", "--remotes"})
_GIT_BAD_LONG = (
    "--output",
    "--open-files-in-pager",
    "--ext-diff",
    "--exec",
    "--upload-pack",
    "--receiver",
)


def _git(args: list[str]) -> str | None:
    call = split_git(args)
    for name, _ in call.options:
        option = GIT_GLOBAL_OPTIONS.get(name)
        if option is None or not option.read_only:
            return f"git option {name!r} may change configuration or run programs"
    sub, rest = call.subcommand, call.rest
    if sub is None:
        return "git without a subcommand"
    if sub in _GIT_READ:
        bad = first_option(rest, "O" if sub == "grep" else "", _GIT_BAD_LONG)
        return f"git {sub} {bad} writes files or runs programs" if bad else None
    if sub in _GIT_LISTING:
        if all(a in _GIT_LIST_FLAGS for a in rest):
            return None
        return f"git {sub} with arguments may change refs"
    return f"git {sub} is not a known read-only git command"


CHECKS: dict[str, ReadOnlyCheck] = {
    **dict.fromkeys(
        (
            "ls",
            "cat",
            "head",
            "tail",
            "grep",
            "egrep",
            "fgrep",
            "wc",
            "pwd",
            "echo",
            "printf",
            "which",
            "type",
            "whoami",
            "id",
            "uname",
            "printenv",
            "stat",
            "du",
            "df",
            "cut",
            "tr",
            "diff",
            "cmp",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "ps",
            "free",
            "uptime",
            "nl",
            "column",
            "jq",
            "cd",
            "true",
            "whereis",
        ),
        _plain,
    ),
    "rg": _banned(long=("--pre", "--pre-glob", "--search-zip"), short="z"),
    "tree": _banned(short="oR", long=("--output",), takes_value="LPIHT"),
    "file": _banned(short="C", long=("--compile",), takes_value="mfFeP"),
    "sort": _banned(short="o", long=("--output", "--compress-program"), takes_value="ktST"),
    "date": _date,
    "hostname": _no_operands("fsdiIaAy", ("--fqdn", "--long", "--short", "--domain")),
    "uniq": _uniq,
    "find": _find,
    "sed": _sed,
    "git": _git,
}


def _segment_read_only(words: list[str]) -> str | None:
    """``None`` when the simple command is read-only, else the reason it is not."""
    program = words[0]
    if DYN in program or PROC in program:
        return "the command name is an expansion"
    if "/" in program:
        return f"path-qualified program {program!r} may not be the system's one"
    rule = CHECKS.get(program)
    if rule is None:
        return f"{program!r} is not on the read-only allow list"
    if rule is not _plain and any(DYN in w or PROC in w for w in words[1:]):
        return f"{program} has an argument that expands at run time (it could be a writing flag)"
    return rule(words[1:])


_QUIET = frozenset({"/dev/null"})


def is_read_only_command(text: str) -> tuple[bool, str]:
    """Classify a shell line (or several): ``(read_only, reason)``."""
    if not text.strip():
        return False, "no command text to classify"
    script = parse_script(text)
    if script.problems:
        return False, f"cannot parse: {script.problems[0]}"
    if script.substitutions:
        return False, "command or process substitution runs another command"
    if script.assigns:
        return False, "a variable assignment changes what later commands run"
    if script.background:
        return False, "a background job"
    if script.compound:
        return False, "loops, conditionals, groups, subshells and functions are not classified"
    commands: list[str] = []
    for command in script.commands:
        if command.assignments:
            return False, f"variable assignment {command.assignments[0]!r}"
        for r in command.redirects:
            if r.op not in (">", ">>", "&>", "&>>") or r.target not in _QUIET:
                return False, f"redirection {r.op}{r.target[:40]!r}"
        if not command.words:
            return False, "a redirection without a command"
        why = _segment_read_only(command.words)
        if why is not None:
            return False, why
        commands.append(command.words[0])
    if not commands:
        return False, "no command text to classify"
    return True, "read-only command(s): " + ", ".join(dict.fromkeys(commands))
