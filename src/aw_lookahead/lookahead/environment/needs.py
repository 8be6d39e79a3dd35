"""What a shell text needs to exist before it runs, read from its parse; no I/O here.

:func:`shell_plan` turns a text into an ordered plan: for each simple command
that runs unconditionally, the programs, paths, git refs and make targets it
needs (:class:`Need`), then what it does to the state later commands see
(:class:`Creates`, :class:`Chdir`, :class:`Unknown`). An evaluator
(:mod:`.local`) walks the plan against a real file system: a need observed
missing is certain only while nothing earlier in the text may have made it.

Conservative by construction: a command whose failure the text handles
(``||``, ``if``, a loop, a function body, ``2>/dev/null``, after a ``test``)
needs nothing; a word that expands at run time, a glob or a brace is never a
need; a program whose effects on the file system are not known ends the plan
with :class:`Unknown` after its own needs; so does a parse with problems.
"""

from __future__ import annotations

from aw_lookahead.lookahead._shell_programs import command_after
from aw_lookahead.lookahead.shell_parse import Command, Redirect, Script

from .commands import program_steps
from .plan import Chdir, Creates, Need, Plan, Unknown, is_static
from .programs import BUILTINS

__all__ = ["Chdir", "Creates", "Need", "Plan", "Unknown", "shell_plan"]

_TESTS = frozenset({"test", "[", "[[", "type", "which", "hash"})


_WRAPPERS: dict[str, tuple[str, tuple[str, ...], int]] = {
    "sudo": ("ugCDhpRrTU", ("--user", "--group", "--chdir"), 0),
    "nice": ("n", ("--adjustment",), 0),
    "nohup": ("", (), 0),
    "time": ("fo", ("--format", "--output"), 0),
    "timeout": ("sk", ("--signal", "--kill-after"), 1),
    "stdbuf": ("ioe", ("--input", "--output", "--error"), 0),
    "exec": ("a", (), 0),
    "env": ("uCS", ("--unset", "--chdir", "--split-string"), 0),
}


def _silenced(redirects: list[Redirect]) -> bool:
    """Is stderr thrown away (``2>/dev/null``, ``&>/dev/null``)? Then a failure is expected."""
    return any(
        r.target == "/dev/null" and (r.fd == "2" or r.op in ("&>", "&>>")) for r in redirects
    )


def _redirect_steps(redirects: list[Redirect]) -> Plan:
    plan: Plan = []
    for r in redirects:
        if not is_static(r.target) or r.target.startswith("/dev/") or r.target.isdigit():
            continue
        if r.op == "<":
            plan.append(Need("path", r.target, "the < redirect reads it", want="file"))
        elif ">" in r.op and not r.op.endswith("&"):
            plan.append(Need("parent", r.target, "the output is written there"))
            if ">>" not in r.op:
                plan.append(Need("fresh", r.target, "the > redirect writes onto it"))
            plan.append(Creates((r.target,)))
    return plan


def _long_options(name: str, args: list[str]) -> Plan:
    """``--name`` options of ``args`` that are surely options (not a value of the option
    before them): after the program, an operand or ``--x=v``; none after ``--``."""
    plan: Plan = []
    previous = name
    for arg in args:
        if arg == "--":
            break
        plain = not previous.startswith("-") or "=" in previous
        if arg.startswith("--") and plain and is_static(arg):
            option = arg[2:].split("=", 1)[0]
            plan.append(Need("option", option, f"{name} is given it", program=name))
        previous = arg
    return plan


def _unwrap(words: list[str]) -> list[str]:
    """The command a wrapper (``sudo``, ``env``, ``timeout 5``...) runs, else the words."""
    while words and words[0] in _WRAPPERS and len(words) > 1:
        short, long, extra = _WRAPPERS[words[0]]
        words = command_after(words[1:], short, long, extra)
    return words


def _command_steps(command: Command) -> Plan:
    words = _unwrap(command.words)
    plan = _redirect_steps(command.redirects)
    if not words:
        return plan
    name, args = words[0], words[1:]
    if not is_static(name):
        return [*plan, Unknown("a program known only when it runs")]
    if "/" in name:
        plan.insert(0, Need("path", name, "it is run", want="exec"))
    elif name not in BUILTINS:
        plan.insert(0, Need("program", name, "it is run"))
    return plan + _long_options(name, args) + program_steps(name.rsplit("/", 1)[-1], args)


def shell_plan(script: Script) -> Plan:
    """The ordered plan of ``script`` (see the module docstring)."""
    if script.problems:
        return [Unknown("the text does not parse cleanly")]
    plan: Plan = []
    tested = False
    for command in script.commands:
        words = command.words
        if (words and words[0] in _TESTS) or words[:2] == ["command", "-v"]:
            tested = True
        if command.guarded or tested or _silenced(command.redirects):
            plan.append(Unknown("its failure is handled by the text"))
            continue
        if words and words[0] in script.functions:
            plan.append(Unknown(f"{words[0]} is a function of the text"))
            continue
        if words[:1] == ["alias"] or words[:1] in (["source"], ["."], ["export"], ["unset"]):
            plan.append(Unknown(f"{words[0]} changes what names mean"))
            continue
        if any(a.startswith("PATH=") for a in command.assignments):
            plan.append(Unknown("PATH is changed"))
            continue
        plan.extend(_command_steps(command))
    return plan
