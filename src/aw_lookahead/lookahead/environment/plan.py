"""The plan a shell text makes: what each command needs, and what it does to later ones.

Data only (:class:`Need`, :class:`Creates`, :class:`Chdir`, :class:`Unknown`), built
by :mod:`.needs` and walked against a file system by :mod:`.look`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from aw_lookahead.lookahead.shell_parse import DYN, PROC

__all__ = [
    "Chdir",
    "Creates",
    "Need",
    "NeedKind",
    "Plan",
    "Step",
    "Unknown",
    "is_pattern",
    "is_static",
]

NeedKind = Literal[
    "program", "path", "parent", "absent", "fresh", "option", "repo", "ref", "target"
]


@dataclass(frozen=True, slots=True)
class Need:
    """One thing a command needs. ``kind``:

    * ``program``: ``subject`` is found on PATH (builtins and the text's own
      functions are never needs);
    * ``path``: ``subject`` exists (``want`` ``file``/``dir``/``any``/``exec``,
      a file that can be run); with ``glob`` some name in its folder matches its
      last part (bash passes an unmatched ``*.txt`` on as it is); with
      ``on_path`` a bare name may also be found on PATH (``bash x.sh``);
      ``suffixes`` are tried too (``gunzip f`` reads ``f.gz``);
    * ``parent``: the folder ``subject`` goes into exists;
    * ``absent``: ``subject`` does not exist yet (``mkdir`` without ``-p``);
    * ``fresh``: ``subject`` is written onto (``mv a b``, ``cp a b``, ``> f``); never unmet,
      only looked at: observed absent, the write creates it and overwrites nothing;
    * ``option``: the GNU tool ``program`` knows the long option ``--subject``
      (read from the tool's own file; a tool that is not GNU's is not judged);
    * ``repo``: the working directory is in a git repository;
    * ``ref``: ``subject`` names a git branch, tag or remote branch;
    * ``target``: the makefile of the working directory has rule ``subject``
      (``""``: any makefile at all).

    ``role`` says why, in the words of an explanation (``"read"``, ``"cd"``...).
    """

    kind: NeedKind
    subject: str
    role: str = ""
    want: Literal["file", "dir", "any", "exec"] = "any"
    on_path: bool = False
    suffixes: tuple[str, ...] = ()
    glob: bool = False
    program: str = ""


@dataclass(frozen=True, slots=True)
class Creates:
    """Paths the command may create (a file or a folder, and every folder above it)."""

    paths: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Chdir:
    """The command changes the working directory to ``path`` (once it is observed there)."""

    path: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """From here on nothing is known: the command's effects are not read."""

    why: str


Step = Need | Creates | Chdir | Unknown


Plan = list[Step]


_GLOB = re.compile(r"[*?\[{]")


def is_static(word: str) -> bool:
    """A word whose value is known before the command runs (no expansion, glob or ``~user``)."""
    if not word or DYN in word or PROC in word or _GLOB.search(word):
        return False
    return not (word.startswith("~") and word not in ("~",) and not word.startswith("~/"))


def is_pattern(word: str) -> bool:
    """A word whose only run-time part is a ``*``/``?`` glob in its last path part."""
    folder, _, last = word.rpartition("/")
    return (
        bool(last)
        and is_static(folder or ".")
        and not any(c in last for c in "[{" + DYN + PROC)
        and ("*" in last or "?" in last)
    )
