"""Destructive by effect: what a shell text deletes, empties, overwrites or kills.

The text is parsed (:mod:`.shell_parse`, a real bash grammar) into every
simple command it runs, and each is judged by its effect, however it is
spelled. Wrappers are followed into what they run: ``sh -c``/``bash -c``,
``eval``, shells fed a heredoc, a here-string or a piped ``echo``,
``env``/``nice``/``timeout``/``exec``/``sudo``/``nohup``/``xargs``/``watch``/
``flock``/``ssh``/``su -c``/``docker exec``/``kubectl exec``, ``find -exec``,
``trap`` and ``alias`` bodies, function bodies (called or not), command and
process substitutions. Interpreter one-liners are read as code
(:mod:`._code_effects`). What runs code the parser cannot see is not harmless
(:mod:`.indirect`): runners, editors, settings and variables that name a
program are judged by the code they run when the text shows it and are
possibly destructive when it does not, and a program no table knows is read
by behaviour (another program's argv or shell text among its arguments,
deleting verbs and options, HTTP methods, SQL).

Two severities (:class:`Effect`):

* ``destroys``: deletes (``rm``, ``rmdir``, ``unlink``, ``shred``, ``find
  -delete``, ``rsync --delete``, ``git clean -f``/``rm``/``branch -D``...),
  empties (``truncate``, ``: > f``, ``> f``, ``cp /dev/null f``, ``sort f > f``
  where the shell empties ``f`` before the command reads it, ``dd of=``),
  moves away (``mv``), discards work (``git reset --hard``, ``checkout --``,
  ``restore``), rewrites remote history (``git push --force``/``+ref``/
  ``--delete``), kills (``kill``, ``pkill``, ``killall``, service stops),
  changes permissions recursively (``chmod -R``...), deletes containers or
  cloud resources, drops database objects, uninstalls packages - and
  anything whose effect the text hides: what does not parse, a command named
  by an expansion (``$CMD x``, ``$(echo rm) x``), shell code from a pipe or
  file the text does not show (``curl ... | sh``), computed interpreter code.
* ``overwrites``: writes onto a path that may already exist - ``>``/``>|``/``&>``
  onto a file, ``tee`` without ``-a``, ``cp``/``rsync``/``install`` onto a
  target, ``ln -f``, ``sort -o``, ``open(..., "w")``. The text cannot tell
  whether the path exists, so these count as destructive when nothing could
  check them; a working world model judges them.

Not effects (the line, by design): ``>>`` appends; redirections to
``/dev/null``, ``/dev/stdout``, ``/dev/stderr``, ``/dev/tty`` and fd
duplications (``2>&1``); ``cp -n``; in-place edits (``sed -i``) and programs'
own output options (``tar -cf``, ``gcc -o``, ``curl -o``) are writes, not
overwrites; running a named script or program (``python script.py``,
``make``, ``bash run.sh``) is judged by its text only - what the script does
is the world model's to predict.
"""

from __future__ import annotations

import functools
import re

from ._git_effects import git_effects
from ._infra_effects import INFRA_PROGRAMS
from ._shell_programs import (
    DEVICES,
    PROGRAMS,
    Effect,
    Severity,
    command_after,
    operands,
    plain_word,
)
from .indirect.editors import EDITORS
from .indirect.interpreters import (
    AWKS,
    CODE_FLAGS,
    DB_CLIENTS,
    EVALUATORS,
    PYTHONS,
    STDIN_FILES,
    awk,
    database,
    evaluator,
    interpreter,
    stdin_code,
)
from .indirect.runners import RUNNERS
from .indirect.unknown import INERT, assignment_effects, assignments_in, unknown_effects
from .shell_parse import DYN, PROC, Command, parse_script, shell_quote_dyn

__all__ = ["MAX_TEXT", "Effect", "Severity", "shell_effects", "worst_effect"]

MAX_TEXT = 256 * 1024
"""Longer shell text is not read; it counts as possibly destructive."""
_MAX_DEPTH = 8

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash"})
_NULL_OUTPUT = frozenset({":", "true", "false", "exec"})
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})

# wrapper -> (short options taking a value, long options taking a value)
_WRAPPERS: dict[str, tuple[str, tuple[str, ...]]] = {
    "env": ("uC", ("--unset", "--chdir")),
    "nice": ("n", ("--adjustment",)),
    "ionice": ("cnt", ("--class", "--classdata")),
    "exec": ("a", ()),
    "sudo": ("ugCDhprtUT", ("--user", "--group", "--chdir", "--host", "--prompt", "--role")),
    "doas": ("uC", ()),
    "nohup": ("", ()),
    "builtin": ("", ()),
    "unbuffer": ("", ()),
    "chronic": ("", ()),
    "caffeinate": ("", ()),
    "setsid": ("", ()),
    "time": ("fo", ("--format", "--output")),
    "stdbuf": ("ioe", ("--input", "--output", "--error")),
    "coproc": ("", ()),
    "busybox": ("", ()),
    "strace": ("eopsE", ("--output",)),
    "xvfb-run": ("nsfe", ()),
}
_SKIP_ONE = {"timeout": ("sk", ("--signal", "--kill-after")), "chroot": ("", ("--userspec",))}
_SKIP_ONE["taskset"] = ("", ())


class _Judge:
    """Judges commands at one nesting depth; recursion goes through :meth:`code`/:meth:`argv`."""

    def __init__(self, depth: int, command: Command | None = None) -> None:
        self.depth = depth
        self.command = command or Command(words=[])

    @property
    def stdin(self) -> tuple[str | None, bool]:
        """What the command reads on stdin when the text shows it, and whether it reads
        input the text does not show."""
        return self.command.stdin, self.command.stdin_unknown

    def code(self, text: str) -> list[Effect]:
        if self.depth >= _MAX_DEPTH:
            return [Effect("destroys", "the command nests shells too deeply to read")]
        return _text_effects(shell_quote_dyn(text), self.depth + 1)

    def guess(self, text: str) -> list[Effect]:
        if self.depth >= _MAX_DEPTH:
            return [Effect("destroys", "the command nests shells too deeply to read")]
        return _text_effects(shell_quote_dyn(text), self.depth + 1, lenient=True)

    def argv(self, words: list[str]) -> list[Effect]:
        if self.depth >= _MAX_DEPTH:
            return [Effect("destroys", "the command nests wrappers too deeply to read")]
        inner = Command(words=list(words), redirects=self.command.redirects)
        inner.stdin, inner.stdin_unknown = self.command.stdin, self.command.stdin_unknown
        inner.peers = self.command.peers
        return _words(inner, _Judge(self.depth + 1, inner))


def _redirect_effects(command: Command) -> list[Effect]:
    out: list[Effect] = []
    inputs = {r.target for r in command.redirects if r.op == "<"}
    null = _prints_nothing(command.words)
    for r in command.redirects:
        if r.op not in (">", ">|", "&>", ">&"):
            continue
        target = r.target
        if r.op == ">&" and (target.isdigit() or target == "-"):
            continue
        if target in DEVICES or target.startswith(("/dev/fd/", "/proc/self/fd/")) or PROC in target:
            continue
        if target.startswith("/dev/"):
            out.append(Effect("destroys", f"the redirection writes over the device {target!r}"))
        elif null:
            out.append(Effect("destroys", f"the redirection empties {target!r}"))
        elif target in inputs or (DYN not in target and target in command.peers):
            out.append(Effect("destroys", f"the shell empties {target!r} before it is read"))
        else:
            shown = target.replace(DYN, "$…")
            why = f"'> {shown}' overwrites the file if it exists"
            out.append(Effect("overwrites", why, target if plain_word(target) else None))
    return out


def _prints_nothing(words: list[str]) -> bool:
    if not words:
        return True
    name, args = words[0], words[1:]
    if name in _NULL_OUTPUT and (name != "exec" or not args):
        return True
    if name == "echo" and args and all(a in ("-n", "-ne", "-en") for a in args):
        return True
    if name == "printf" and args[:1] == [""] and len(args) == 1:
        return True
    return name == "cat" and args == ["/dev/null"]


def _skip(args: list[str], value_short: str, value_long: tuple[str, ...], extra: int) -> list[str]:
    """The command a wrapper runs: its arguments after its own options (and ``extra`` operands)."""
    return command_after(args, value_short, value_long, extra)


def _shell(args: list[str], j: _Judge) -> list[Effect]:
    i = 0
    code_next = False
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if a.startswith(("-", "+")) and len(a) > 1 and a != "--":
            if not a.startswith("--") and "c" in a[1:]:
                code_next = True
            i += 1
            continue
        if a == "--":
            i += 1
        break
    rest = args[i:]
    if code_next:
        return j.code(rest[0]) if rest else []
    if rest and rest[0] in STDIN_FILES:
        return stdin_code(j, "shell", j.code)
    if rest and not (len(rest) == 1 and rest[0] == "-s"):
        if PROC in rest[0] or rest[0] == DYN:
            return [Effect("destroys", "the shell runs a script the text does not show")]
        return []
    return stdin_code(j, "shell", j.code)


def _inline(base: str, args: list[str], j: _Judge) -> list[Effect] | None:
    """Commands that run text as shell code; ``None`` when ``base`` is not one."""
    if base == "eval":
        return j.code(" ".join(args)) if args else []
    if base == "trap":
        return j.code(args[0]) if args and args[0] not in ("-", "-p", "-l", "--") else []
    if base == "alias":
        return [e for a in args if "=" in a for e in j.code(a.split("=", 1)[1])]
    if base in ("su", "script", "flock", "nix-shell"):
        for k, a in enumerate(args):
            short_c = a.startswith("-") and not a.startswith("--") and a.endswith("c")
            if (a in ("--command", "--run") or short_c) and k + 1 < len(args):
                return j.code(args[k + 1])
            if a.startswith(("--command=", "--run=")):
                return j.code(a.split("=", 1)[1])
        if base == "flock":
            return j.argv(_skip(args, "wEo", ("--timeout", "--conflict-exit-code"), 1))
        return []
    if base == "watch":
        rest = _skip(args, "nqd", ("--interval",), 0)
        return j.code(" ".join(rest)) if rest else []
    if base == "ssh":
        rest = operands(args, "BbcDEeFIiJLlmOoPpQRSWw", ())
        return j.code(" ".join(rest[1:])) if len(rest) > 1 else []
    if base in ("source", "."):
        if args and args[0] in STDIN_FILES:
            return stdin_code(j, base, j.code)
        if args and PROC in args[0]:
            return [Effect("destroys", f"{base} runs code the text does not show")]
        return []
    if base == "env" and any(a in ("-S", "--split-string") or a.startswith("-S") for a in args):
        return j.code(" ".join(a for a in args if not a.startswith("-S") and a != "--split-string"))
    return None


def _words(command: Command, j: _Judge) -> list[Effect]:
    words = command.words
    if not words:
        return []
    name, args = words[0], words[1:]
    if DYN in name or PROC in name:
        return [Effect("destroys", "the command name is an expansion, so what runs is unknown")]
    base = name.rsplit("/", 1)[-1]
    if base.startswith("mkfs"):
        return [Effect("destroys", f"{base} formats a device")]
    inline = _inline(base, args, j)
    if inline is not None:
        return inline
    if base == "command" and any(a in ("-v", "-V") for a in args[:2]):
        return []
    if base in _DECLARE:
        return assignment_effects(assignments_in(args, raw=True), j)
    if base in _WRAPPERS or base == "command":
        short, long = _WRAPPERS.get(base, ("", ()))
        inner = _skip(args, short, long, 0)
        before = args[: len(args) - len(inner)]
        return assignment_effects(assignments_in(before), j) + j.argv(inner)
    if base in _SKIP_ONE:
        short, long = _SKIP_ONE[base]
        return j.argv(_skip(args, short, long, 1))
    if base in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye", "conda") and args[:1] == ["run"]:
        return j.argv(_skip(args[1:], "pn", ("--with", "--python", "--name", "--env-file"), 0))
    if base in ("npx", "bunx", "pnpx"):
        return j.argv(_skip(args, "p", ("--package",), 0))
    if base == "xargs":
        inner = _skip(args, "IELnPsda", ("--arg-file", "--delimiter", "--replace", "--max-args"), 0)
        return j.argv([*(inner or ["echo"]), DYN])
    if base == "parallel":
        inner = _skip(args, "jS", ("--jobs",), 0)
        cut = next((k for k, a in enumerate(inner) if a.startswith(":::")), len(inner))
        return j.code(" ".join([*inner[:cut], DYN])) if inner[:cut] else []
    if base in _SHELLS:
        return _shell(args, j)
    if base.startswith(PYTHONS) or base in CODE_FLAGS:
        return interpreter(base, args, j)
    if base in AWKS:
        return awk(args, j)
    if base in DB_CLIENTS:
        return database(base, args, command.stdin, command.stdin_unknown)
    if base in EVALUATORS or re.sub(r"[\d.]+$", "", base) in EVALUATORS:
        return evaluator(re.sub(r"[\d.]+$", "", base) if base not in EVALUATORS else base, args, j)
    if base == "git":
        return git_effects(args, j)
    rule = PROGRAMS.get(base) or INFRA_PROGRAMS.get(base) or RUNNERS.get(base)
    rule = rule or EDITORS.get(base)
    if rule is not None:
        return rule(args, j)
    if base in INERT:
        return []
    return unknown_effects(base, args, j, _is_known)


def _is_known(name: str) -> bool:
    """Is ``name`` a program whose argv the effect rules read (so a wrapper's tail is judged)?"""
    return (
        name in PROGRAMS
        or name in INFRA_PROGRAMS
        or name in RUNNERS
        or name in EDITORS
        or name in _SHELLS
        or name in _WRAPPERS
        or name in _SKIP_ONE
        or name in DB_CLIENTS
        or name in EVALUATORS
        or name in CODE_FLAGS
        or name in AWKS
        or name.startswith(PYTHONS)
        or name.startswith("mkfs")
        or name in ("git", "eval", "xargs", "parallel", "su", "ssh", "watch", "flock", "script")
        or name in ("source", ".", "trap", "nix-shell", "npx", "bunx", "pnpx")
    )


def _text_effects(text: str, depth: int, *, lenient: bool = False) -> list[Effect]:
    if len(text) > MAX_TEXT:
        return [Effect("destroys", f"the command is too long to read ({len(text)} characters)")]
    script = parse_script(text)
    out: list[Effect] = []
    if script.problems and not lenient:
        out.append(Effect("destroys", f"the shell text does not parse ({script.problems[0]})"))
    out += assignment_effects(assignments_in(script.assignments, raw=True), _Judge(depth))
    for command in script.commands:
        out += _redirect_effects(command)
        out += _words(command, _Judge(depth, command))
    return out


@functools.lru_cache(maxsize=2048)
def _cached(text: str) -> tuple[Effect, ...]:
    return tuple(dict.fromkeys(_text_effects(text, 0)))


def shell_effects(text: str) -> tuple[Effect, ...]:
    """Every effect of the shell ``text`` (``destroys`` first), or ``()`` when it has none."""
    effects = _cached(text) if len(text) <= 4096 else tuple(dict.fromkeys(_text_effects(text, 0)))
    return tuple(sorted(effects, key=lambda e: e.severity != "destroys"))


def worst_effect(text: str) -> Effect | None:
    """The most severe effect of ``text`` (``destroys`` before ``overwrites``), or ``None``."""
    effects = shell_effects(text)
    return effects[0] if effects else None
