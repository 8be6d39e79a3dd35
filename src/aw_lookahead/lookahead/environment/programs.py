"""Tables for reading what shell commands need: builtins, programs that only read, readers.

A program in :data:`NO_EFFECT` creates, moves and deletes no file, so the
paths it leaves behind are the ones that were there; a program in neither
table ends what the plan can know (:class:`~.needs.Unknown`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["BUILTINS", "NO_EFFECT", "READERS", "Reader", "word_set"]


def word_set(text: str) -> frozenset[str]:
    """The names of a table written as words."""
    return frozenset(text.split())


BUILTINS = word_set(
    """
    alias bg bind break builtin caller cd command compgen complete compopt continue declare
    dirs disown echo enable eval exec exit export false fc fg getopts hash help history jobs
    kill let local logout mapfile popd printf pushd pwd read readarray readonly return set
    shift shopt source suspend test times trap true type typeset ulimit umask unalias unset
    wait . : [ [[ ]] { } ! if then else elif fi case esac for select while until do done in
    function time coproc
    """
)
"""Names bash runs without looking at PATH (builtins and reserved words)."""


@dataclass(frozen=True, slots=True)
class Reader:
    """A program whose file operands must exist.

    ``value_short``/``value_long``: options that take a value. With
    ``first_is_script`` the first operand is a pattern or program (``grep``,
    ``sed``, ``awk``) unless an option in ``code_given`` gives it. Options in
    ``quiet`` make missing files not an error (``grep -s``). ``inputs`` keeps
    only the first operands (``uniq IN OUT``); ``suffixes`` are also tried.
    """

    value_short: str = ""
    value_long: tuple[str, ...] = ()
    first_is_script: bool = False
    code_given: tuple[str, tuple[str, ...]] = ("", ())
    quiet: tuple[str, tuple[str, ...]] = ("", ())
    skip_assignments: bool = False
    inputs: int | None = None
    want: Literal["file", "dir", "any"] = "any"
    suffixes: tuple[str, ...] = ()


_PLAIN = Reader()
_GREP = Reader(
    value_short="efmABCDd",
    value_long=(
        "--regexp",
        "--file",
        "--max-count",
        "--after-context",
        "--before-context",
        "--context",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--label",
        "--devices",
        "--directories",
        "--binary-files",
        "--group-separator",
    ),
    first_is_script=True,
    code_given=("ef", ("--regexp", "--file")),
    quiet=("s", ("--no-messages",)),
)

READERS: dict[str, Reader] = {
    **dict.fromkeys(
        word_set(
            "cat tac rev md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum "
            "comm zcat bzcat xzcat less more"
        ),
        _PLAIN,
    ),
    "nl": Reader(value_short="bdfhilnsvw"),
    "head": Reader(value_short="nc", value_long=("--lines", "--bytes")),
    "tail": Reader(
        value_short="ncs", value_long=("--lines", "--bytes", "--pid", "--sleep-interval")
    ),
    "wc": Reader(value_long=("--files0-from",)),
    "base64": Reader(value_short="w", value_long=("--wrap",)),
    "od": Reader(value_short="AjNtwS"),
    "strings": Reader(value_short="nt"),
    "stat": Reader(value_short="c", value_long=("--format", "--printf")),
    "du": Reader(value_short="dBt", value_long=("--max-depth", "--block-size", "--threshold")),
    "ls": Reader(
        value_short="IwT",
        value_long=("--ignore", "--width", "--tabsize", "--hide", "--format", "--sort", "--time"),
    ),
    "sort": Reader(
        value_short="ktoST",
        value_long=(
            "--key",
            "--field-separator",
            "--output",
            "--buffer-size",
            "--temporary-directory",
        ),
    ),
    "uniq": Reader(value_short="fsw", inputs=1),
    "cut": Reader(value_short="bcdf", value_long=("--bytes", "--characters", "--delimiter")),
    "paste": Reader(value_short="d", value_long=("--delimiters",)),
    "join": Reader(value_short="12jote"),
    "diff": Reader(
        value_short="UCxXIFSL", value_long=("--label", "--exclude", "--ignore-matching-lines")
    ),
    "cmp": Reader(value_short="in"),
    "fold": Reader(value_short="w"),
    "fmt": Reader(value_short="wpg"),
    "expand": Reader(value_short="t"),
    "unexpand": Reader(value_short="t"),
    "column": Reader(value_short="csoNRHWEd"),
    "grep": _GREP,
    "egrep": _GREP,
    "fgrep": _GREP,
    "sed": Reader(
        value_short="efl",
        value_long=("--expression", "--file", "--line-length"),
        first_is_script=True,
        code_given=("ef", ("--expression", "--file")),
        want="file",
    ),
    "awk": Reader(
        value_short="fvF",
        first_is_script=True,
        code_given=("f", ()),
        skip_assignments=True,
    ),
    "gunzip": Reader(value_short="S", suffixes=(".gz",)),
    "unzip": Reader(value_short="dxP", inputs=1, suffixes=(".zip",)),
    "readlink": Reader(quiet=("fem", ("--canonicalize", "--canonicalize-existing"))),
}

NO_EFFECT = word_set(
    """
    cat tac rev nl head tail wc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum
    cksum base64 od strings stat du ls uniq cut paste join comm diff cmp fold fmt expand
    unexpand column grep egrep fgrep sed less more zcat bzcat xzcat echo printf pwd true false
    test [ [[ basename dirname realpath readlink find date whoami id uname printenv which type file
    tree jq sleep seq expr tr cal df free ps uptime hostname clear tput help hash rg wc env
    rm rmdir chmod chown chgrp
    """
)
"""Programs that create or move no file (``sort -o`` and ``awk`` may: they are not here)."""
