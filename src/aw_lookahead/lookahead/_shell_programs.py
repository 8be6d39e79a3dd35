"""Per-program effect rules: what one command does, read from its name and arguments.

Each rule gets the arguments after the program name (quotes removed, run-time
expansions as :data:`~.shell_parse.DYN`) and a :class:`Recurse` to judge the
commands a program runs in turn (``find -exec``, ``docker exec``). Options are
read the way getopt reads them: short clusters (``-rf``), long options by any
unambiguous prefix GNU accepts (``--rec``), ``--`` ends the options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from .shell_words import DYN, PROC

__all__ = [
    "DEVICES",
    "PROGRAMS",
    "Effect",
    "EffectRule",
    "Recurse",
    "Severity",
    "command_after",
    "first_option",
    "has_option",
    "operands",
    "plain_word",
    "short_letters",
]

Severity = Literal["destroys", "overwrites"]


@dataclass(frozen=True)
class Effect:
    """One way a command can lose data: ``destroys`` (deletes, empties, discards, kills,
    force-pushes, drops, hides what it runs) or ``overwrites`` (writes onto a path that may
    already exist)."""

    severity: Severity
    reason: str
    clobbers: str | None = None
    """The one path whose prior existence makes this effect lose data (``mv a b``, ``cp a b``,
    ``> f``): where that path is observed absent, the write creates and loses nothing."""


class Recurse(Protocol):
    def argv(self, words: list[str]) -> list[Effect]: ...

    def code(self, text: str) -> list[Effect]: ...

    def guess(self, text: str) -> list[Effect]:
        """Effects of text that may be shell code: as :meth:`code`, but text that does not
        parse is not an effect by itself (what does parse still counts)."""
        ...


EffectRule = Callable[[list[str], Recurse], list[Effect]]


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


def _o(reason: str) -> list[Effect]:
    return [Effect("overwrites", reason)]


def short_letters(arg: str, value_short: str = "") -> str:
    """The option letters of a short cluster (``-uo`` -> ``uo``), stopping at one that
    takes a value (its value is the rest of the word); ``""`` for any other word."""
    if not arg.startswith("-") or arg.startswith("--") or arg == "-":
        return ""
    out = []
    for ch in arg[1:]:
        out.append(ch)
        if ch in value_short:
            break
    return "".join(out)


def first_option(
    args: Sequence[str], short: str = "", long: Sequence[str] = (), value_short: str = ""
) -> str | None:
    """The first argument (before ``--``) that uses one of the short letters or long names
    (a long name by any prefix, as GNU ``getopt_long`` reads it), or ``None``."""
    for a in args:
        if a == "--":
            return None
        if a.startswith("--"):
            name = a.split("=", 1)[0]
            if any(f.startswith(name) for f in long):
                return a
        elif set(short_letters(a, value_short)) & set(short):
            return a
    return None


def has_option(
    args: Sequence[str], short: str = "", long: Sequence[str] = (), value_short: str = ""
) -> bool:
    """Does any option (before ``--``) use one of the short letters or long names?"""
    return first_option(args, short, long, value_short) is not None


def operands(
    args: Sequence[str], value_short: str = "", value_long: Sequence[str] = ()
) -> list[str]:
    """The non-option arguments (getopt's permutation: options may follow operands)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i + 1 :])
            break
        if a.startswith("-") and len(a) > 1:
            i += 2 if _takes_value(a, value_short, value_long) else 1
            continue
        out.append(a)
        i += 1
    return out


def command_after(
    args: Sequence[str], value_short: str, value_long: Sequence[str], extra: int = 0
) -> list[str]:
    """What a wrapper runs: its arguments after its own options, ``NAME=value`` words
    and ``extra`` operands of its own (``timeout 5``, ``docker exec CONTAINER``)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if "=" in a and not a.startswith("-") and a.split("=", 1)[0].isidentifier():
            i += 1
        elif a.startswith("-") and len(a) > 1:
            i += 2 if _takes_value(a, value_short, value_long) else 1
        else:
            break
    return list(args[i + extra :])


def _takes_value(a: str, value_short: str, value_long: Sequence[str]) -> bool:
    if a.startswith("--"):
        return "=" not in a and any(f.startswith(a) for f in value_long)
    for k, ch in enumerate(a[1:], 1):
        if ch in value_short:
            return k == len(a) - 1
    return False


def _names(paths: Sequence[str]) -> str:
    shown = ", ".join(repr(p.replace("\x00", "$…")) for p in paths[:3])
    return shown + (", ..." if len(paths) > 3 else "")


def _deleter(verb: str = "deletes") -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        targets = operands(args)
        if not targets and not any(a.startswith("-") for a in args):
            return []
        if set(args) <= {"--help", "--version"}:
            return []
        return _d(f"{verb} {_names(targets) or 'files'}")

    return rule


def _rm(args: list[str], _r: Recurse) -> list[Effect]:
    targets = operands(args)
    if not targets:
        return []
    how = "recursively " if has_option(args, "rR", ("--recursive",)) else ""
    return _d(f"rm {how}deletes {_names(targets)}")


def _find(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-delete":
            out += _d("find -delete deletes every match")
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            inner = args[i + 1 : end]
            if inner and inner[0].rsplit("/", 1)[-1] in _PERMS:
                out += _d(f"find {a} {inner[0]} changes permissions of every match")
            out += [Effect(e.severity, f"find {a} runs: {e.reason}") for e in r.argv(list(inner))]
            i = end
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args):
            out += _o(f"find {a} overwrites {args[i + 1]!r}")
        i += 1
    return out


def _truncate(args: list[str], _r: Recurse) -> list[Effect]:
    targets = operands(args, "sr", ("--size", "--reference"))
    return _d(f"truncate cuts {_names(targets)}") if targets else []


def _dd(args: list[str], _r: Recurse) -> list[Effect]:
    outs = [a[3:] for a in args if a.startswith("of=")]
    if any(o != "/dev/null" for o in outs):
        return _d(f"dd writes raw data over {_names(outs)}")
    return []


_NO_CLOBBER = ("--no-clobber", "--update=none", "--update=none-fail", "--interactive", "--backup")


def _cp(args: list[str], _r: Recurse) -> list[Effect]:
    paths = operands(args, "tS", ("--target-directory", "--suffix"))
    if len(paths) < 2 and not has_option(args, "t", ("--target-directory",)):
        return []
    if any(p in ("/dev/null", "/dev/zero") for p in paths[:-1]):
        return _d(f"cp of /dev/null empties {_names(paths[-1:])}")
    if has_option(args, "nib", _NO_CLOBBER) or any(a.startswith(_NO_CLOBBER) for a in args):
        return []
    why = f"cp overwrites {_names(paths[-1:])} if it exists"
    return [Effect("overwrites", why, _single_target(args, paths))]


def _mv(args: list[str], _r: Recurse) -> list[Effect]:
    paths = operands(args, "tS", ("--target-directory", "--suffix"))
    if not paths:
        return []
    if paths[-1] == "/dev/null":
        return _d(f"mv onto /dev/null destroys {_names(paths[:-1])}")
    why = f"mv moves {_names(paths[:-1] or paths)} away (and may overwrite the target)"
    return [Effect("destroys", why, _single_target(args, paths))]


def plain_word(word: str) -> bool:
    """A word that names one path as written: no expansion, glob, brace or ``~``."""
    return bool(word) and not any(c in word for c in (DYN, PROC, "*", "?", "[", "{", "~"))


def _single_target(args: list[str], paths: list[str]) -> str | None:
    """The target of ``cp``/``mv SOURCE TARGET`` when it names one file: not ``-t``, not a
    folder spelt with ``/``, not a word known only when it runs."""
    if len(paths) != 2 or has_option(args, "t", ("--target-directory",)):
        return None
    target = paths[1]
    return None if target.endswith("/") or not plain_word(target) else target


def _rsync(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "n", ("--dry-run",)):
        return []
    if any(a.startswith(("--del", "--remove-source-files")) for a in args):
        return _d("rsync deletes files (--delete / --remove-source-files)")
    paths = operands(args, "efT", ("--rsh", "--filter", "--exclude", "--include", "--temp-dir"))
    if len(paths) >= 2 and "--ignore-existing" not in args:
        return _o(f"rsync overwrites files under {_names(paths[-1:])}")
    return []


def _ln(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "f", ("--force",)):
        return _o(f"ln -f replaces {_names(operands(args)[-1:])}")
    return []


def _install(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "d", ("--directory",)):
        return []
    paths = operands(args, "gmoStT", ("--group", "--mode", "--owner", "--suffix", "--target"))
    return _o(f"install overwrites {_names(paths[-1:])}") if len(paths) >= 2 else []


def _tee(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "a", ("--append",)):
        return []
    files = [f for f in operands(args) if f not in DEVICES]
    return _o(f"tee overwrites {_names(files)} if it exists") if files else []


def _sort(args: list[str], _r: Recurse) -> list[Effect]:
    for i, a in enumerate(args):
        if a == "--":
            break
        if a.startswith("--") and len(a) > 2 and "--output".startswith(a.split("=", 1)[0]):
            return _o("sort --output overwrites its output file")
        if re.fullmatch(r"-[A-Za-z]*o.*", a) and not a.startswith("--"):
            letters = a[1:]
            k = letters.index("o")
            if not set(letters[:k]) & set("kTtS"):
                target = letters[k + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                return _o(f"sort -o overwrites {target!r}")
    return []


def _uniq(args: list[str], _r: Recurse) -> list[Effect]:
    paths = operands(args, "fsw", ("--skip-fields", "--skip-chars", "--check-chars"))
    if len(paths) >= 2:
        if paths[0] == paths[1]:
            return _d(f"uniq empties {paths[1]!r} before reading it")
        return _o(f"uniq overwrites {paths[1]!r}")
    return []


_PERMS = frozenset({"chmod", "chown", "chgrp", "setfacl", "chattr"})


def _perms(name: str) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        if has_option(args, "R", ("--recursive",)):
            return _d(f"{name} -R changes permissions or ownership of a whole tree")
        return []

    return rule


DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin", "-"})

PROGRAMS: dict[str, EffectRule] = {
    "rm": _rm,
    "rmdir": _deleter("rmdir deletes"),
    "unlink": _deleter("unlink deletes"),
    "shred": _deleter("shred destroys"),
    "srm": _deleter("srm deletes"),
    "wipe": _deleter("wipe destroys"),
    "rimraf": _deleter("rimraf deletes"),
    "wipefs": _deleter("wipefs erases"),
    "blkdiscard": _deleter("blkdiscard erases"),
    "find": _find,
    "truncate": _truncate,
    "dd": _dd,
    "cp": _cp,
    "mv": _mv,
    "rsync": _rsync,
    "ln": _ln,
    "install": _install,
    "tee": _tee,
    "sort": _sort,
    "uniq": _uniq,
    **{name: _perms(name) for name in _PERMS},
}
for _fs in ("mkfs", "mke2fs", "mkswap"):
    PROGRAMS[_fs] = _deleter(f"{_fs} formats")
