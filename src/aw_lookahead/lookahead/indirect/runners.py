"""Programs that run code they are handed, and archivers, cron, disks and users that destroy.

Runners are judged by the code they run when the text shows it, and count as
possibly destructive when it does not: ``at``/``batch`` and ``make -f
/dev/stdin``/``--eval`` (recipes and ``$(shell ...)``), ``sed`` ``e`` commands
and the ``s///e`` flag, ``tar``'s ``--to-command``/``-I``/``--checkpoint-action
=exec``, ``zip -TT``, ``fc`` (re-runs history). Destroyers: ``tar
--remove-files``/``--delete``, ``zip -m``/``-d``, ``7z d``/``-sdel``, ``gzip``
and kin without ``-k``/``-c`` (the original is deleted), ``crontab -r`` or a
new crontab (``crontab /dev/null``), volume, pool, partition and user removal.
"""

from __future__ import annotations

import re

from aw_lookahead.lookahead._readonly import _SED_SAFE
from aw_lookahead.lookahead._shell_programs import Effect, EffectRule, Recurse, has_option, operands
from aw_lookahead.lookahead.shell_parse import DYN, PROC

__all__ = ["RUNNERS"]


def _d(reason: str) -> list[Effect]:
    return [Effect("destroys", reason)]


def _stdin(r: Recurse, what: str) -> list[Effect]:
    """The code a runner reads on stdin: judged when shown, possibly destructive when not."""
    stdin, unknown = getattr(r, "stdin", (None, False))
    if stdin is not None:
        return r.code(stdin)
    return _d(f"{what} runs commands from input the text does not show") if unknown else []


def _literal(r: Recurse, value: str, what: str) -> list[Effect]:
    if not value.replace(DYN, "").replace(PROC, "").strip():
        return _d(f"{what} runs a command the text does not show")
    return [Effect(e.severity, f"{what} runs: {e.reason}") for e in r.code(value)]


def _at(args: list[str], r: Recurse) -> list[Effect]:
    if has_option(args, "rd"):
        return _d("at -r deletes scheduled jobs")
    if "-f" in args:
        script = args[args.index("-f") + 1] if args.index("-f") + 1 < len(args) else ""
        return _stdin(r, "at") if script in ("-", "/dev/stdin", "/dev/fd/0") else []
    if has_option(args, "lc", value_short="fqtM"):
        return []
    return _stdin(r, "at")


def _makefile(text: str, r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for line in text.splitlines():
        if line.startswith("\t"):
            out += r.code(line.lstrip("\t@+- "))
        elif ":" in line and ";" in line.split(":", 1)[1]:
            out += r.code(line.split(":", 1)[1].split(";", 1)[1])
        for m in re.finditer(r"\$[({]shell ([^)}]*)[)}]", line):
            out += r.code(m.group(1))
    return out


def _make(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if a.startswith("--eval="):
            out += _makefile(a.split("=", 1)[1].replace("; ", "\n\t", 1), r)
        elif a in ("-E", "--eval"):
            out += _makefile(nxt.replace("; ", "\n\t", 1), r)
        value = (
            nxt
            if a in ("-f", "--file", "--makefile")
            else a.split("=", 1)[1]
            if a.startswith(("--file=", "--makefile="))
            else a[2:]
            if a.startswith("-f") and len(a) > 2
            else None
        )
        if value is None:
            continue
        if value in ("-", "/dev/stdin", "/proc/self/fd/0", "/dev/fd/0"):
            stdin = getattr(r, "stdin", (None, False))[0]
            if stdin is not None:
                out += _makefile(stdin, r)
            else:
                out += _d("make reads a makefile from input the text does not show")
        elif DYN in value or PROC in value:
            out += _d("make reads a makefile the text does not show")
    return out


_SED_S = re.compile(r"s(.)(?:(?!\1)[^\\\n]|\\.)*\1(?:(?!\1)[^\\\n]|\\.)*\1([A-Za-z0-9]*)")


def _sed(args: list[str], r: Recurse) -> list[Effect]:
    scripts: list[str] = []
    for i, a in enumerate(args):
        if a in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
        elif a.startswith("--expression="):
            scripts.append(a.split("=", 1)[1])
        elif a.startswith("-e") and len(a) > 2:
            scripts.append(a[2:])
    if not scripts and not has_option(args, "f", ("--file",)):
        ops = operands(args, "elf", ("--expression", "--file", "--line-length"))
        scripts = ops[:1]
    out: list[Effect] = []
    for script in scripts:
        if _SED_SAFE.match(script):
            continue
        rest = script
        for m in _SED_S.finditer(script):
            if "e" in m.group(2):
                out += _d("sed s///e runs the pattern space as a command")
            if "w" in m.group(2):
                out.append(Effect("overwrites", "sed s///w writes a file"))
        rest = _SED_S.sub(";", script)
        for m in re.finditer(
            r"(?:^|[;{}\n])\s*(?:[\d$,/!~]|/[^/]*/)*\s*([ewW])(?:\s+([^;\n}]*))?", rest
        ):
            if m.group(1) == "e":
                command = (m.group(2) or "").strip()
                out += r.code(command) if command else _d("sed e runs the pattern space")
            else:
                out.append(Effect("overwrites", "sed w writes a file"))
    return out


def _tar(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for i, a in enumerate(args):
        nxt = args[i + 1] if i + 1 < len(args) else ""
        name, eq, value = a.partition("=")
        if a.startswith("--") and len(name) > 4:
            if "--remove-files".startswith(name):
                out += _d("tar --remove-files deletes the files it archives")
            elif "--delete".startswith(name) and len(name) > 4:
                out += _d("tar --delete deletes members of the archive")
            elif name in ("--to-command", "--use-compress-program", "--info-script") or name in (
                "--new-volume-script",
                "--rsh-command",
            ):
                out += _literal(r, value if eq else nxt, f"tar {name}")
            elif name == "--checkpoint-action" and value.startswith("exec="):
                out += _literal(r, value[5:], "tar --checkpoint-action=exec")
        elif a.startswith("-") and not a.startswith("--") and ("I" in a or "F" in a):
            glued = a[max(a.find("I"), a.find("F")) + 1 :]
            out += _literal(r, glued or nxt, "tar -I/-F")
    return out


def _zip(args: list[str], r: Recurse) -> list[Effect]:
    out: list[Effect] = []
    for i, a in enumerate(args):
        if a in ("-TT", "--unzip-command") and i + 1 < len(args):
            out += _literal(r, args[i + 1], "zip -TT")
        elif a in ("-m", "--move") or (re.fullmatch(r"-[A-Za-z0-9]+", a) and "m" in a[1:]):
            if not a.startswith(("-d", "-T")):
                out += _d("zip -m deletes the files it archives")
        elif a in ("-d", "--delete"):
            out += _d("zip -d deletes members of the archive")
    return out


def _seven(args: list[str], _r: Recurse) -> list[Effect]:
    ops = operands(args)
    if ops[:1] == ["d"] or "-sdel" in args:
        return _d("7z deletes files (d / -sdel)")
    return []


_KEEP = ("--keep", "--stdout", "--to-stdout", "--list", "--test", "--help", "--version")


def _compressor(name: str) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        files = [o for o in operands(args, "S", ("--suffix",)) if o != "-"]
        if not files or has_option(args, "kcltLhV", _KEEP):
            return []
        return _d(f"{name} replaces {files[0]!r} with its (de)compressed form, deleting it")

    return rule


def _crontab(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "r", value_short="u"):
        return _d("crontab -r deletes the crontab")
    if has_option(args, "le", value_short="u"):
        return []
    return _d("crontab FILE (or stdin) replaces the whole crontab")


def _fc(args: list[str], _r: Recurse) -> list[Effect]:
    if has_option(args, "l", value_short="e"):
        return []
    return _d("fc re-runs a history entry the text does not show")


def _always(reason: str) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        return [] if set(args) <= {"--help", "-h", "--version", "-V"} else _d(reason)

    return rule


def _short(letters: str, reason: str, long: tuple[str, ...] = ()) -> EffectRule:
    def rule(args: list[str], _r: Recurse) -> list[Effect]:
        return _d(reason) if has_option(args, letters, long) else []

    return rule


def _sfdisk(args: list[str], r: Recurse) -> list[Effect]:
    if has_option(args, "ldsVJgr", ("--list", "--dump", "--show-size", "--json", "--verify")):
        return []
    return _d("sfdisk writes a partition table")


_RCLONE = frozenset({"sync", "move", "moveto", "delete", "deletefile", "purge", "rmdir", "rmdirs"})
_RCLONE = _RCLONE | {"cleanup", "dedupe", "bisync"}


def _rclone(args: list[str], _r: Recurse) -> list[Effect]:
    ops = operands(args)
    return _d(f"rclone {ops[0]} deletes files") if ops and ops[0] in _RCLONE else []


def _option_code(*options: str) -> EffectRule:
    """Readers whose named options take a command they run (``rg --pre``, ``man -P``,
    ``split --filter``) or whose ``+cmd`` is a pager command (``less +'!cmd'``)."""

    def rule(args: list[str], r: Recurse) -> list[Effect]:
        out: list[Effect] = []
        for i, a in enumerate(args):
            name, eq, value = a.partition("=")
            if name in options and (eq or i + 1 < len(args)):
                out += _literal(r, value if eq else args[i + 1], name)
            elif a.startswith("+") and "!" in a:
                out += _literal(r, a.split("!", 1)[1], "the pager")
        return out

    return rule


RUNNERS: dict[str, EffectRule] = {
    "rg": _option_code("--pre"),
    "ag": _option_code("--pager"),
    "man": _option_code("-P", "--pager", "-H", "--html"),
    "less": _option_code(),
    "more": _option_code(),
    "split": _option_code("--filter"),
    "rclone": _rclone,
    "at": _at,
    "batch": _at,
    "atrm": _always("atrm deletes scheduled jobs"),
    "make": _make,
    "gmake": _make,
    "sed": _sed,
    "gsed": _sed,
    "tar": _tar,
    "gtar": _tar,
    "bsdtar": _tar,
    "zip": _zip,
    "7z": _seven,
    "7za": _seven,
    "7zz": _seven,
    "crontab": _crontab,
    "fc": _fc,
    **{n: _compressor(n) for n in ("gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz")},
    **{n: _compressor(n) for n in ("lzma", "unlzma", "lzip", "pigz", "pbzip2", "compress")},
    **{n: _always(f"{n} deletes volumes, users or groups") for n in ("lvremove", "vgremove")},
    **{n: _always(f"{n} deletes volumes, users or groups") for n in ("pvremove", "lvreduce")},
    **{n: _always(f"{n} deletes volumes, users or groups") for n in ("userdel", "deluser")},
    **{n: _always(f"{n} deletes volumes, users or groups") for n in ("groupdel", "delgroup")},
    "vgreduce": _always("vgreduce removes a volume from its group"),
    "passwd": _short("dle", "passwd -d/-l/-e removes or locks a password"),
    "sgdisk": _short("Zzod", "sgdisk wipes or deletes partitions", ("--zap", "--clear")),
    "sfdisk": _sfdisk,
    "pacman": _short("R", "pacman -R removes packages", ("--remove",)),
    "rpm": _short("e", "rpm -e removes packages", ("--erase",)),
    "dpkg": _short("rP", "dpkg -r/-P removes packages", ("--remove", "--purge")),
    "iptables": _short("FXDZ", "iptables flushes or deletes rules", ("--flush", "--delete")),
    "ip6tables": _short("FXDZ", "ip6tables flushes or deletes rules", ("--flush", "--delete")),
    "losetup": _short("dD", "losetup -d detaches loop devices", ("--detach",)),
}
