"""What keeps redacting a large text cheap: hint words looked for once, splicing in bulk.

A megabyte of tool output is checked for some seventy hint words:
:class:`~aw_lookahead._hint_words.HintWords` (re-exported here) looks for each
once per text. Input made of nothing but secrets has a match every few
characters: :func:`splice` decides each distinct match text once (many at
once through ``decide_all``) and puts the text back together with C-level
iteration (``map``, ``dict``, ``str.join``), or with one ``str.replace``
when all matches are one repeated text. (A rule's own bulk reading, texts
instead of match objects, is :meth:`~aw_lookahead._redact_rules.Rule.bulk`.)
:func:`collector_paused` keeps the cyclic garbage collector off meanwhile.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import re
from collections.abc import Callable, Iterator
from itertools import repeat
from typing import AnyStr

from ._hint_words import HintWords

__all__ = [
    "BULK_CHARS",
    "HintWords",
    "collector_paused",
    "splice",
    "splice_lowered",
]

BULK_CHARS = 4096
"""Texts from this length on are worth :class:`HintWords`; shorter ones search directly."""
_DECIDE_ALL = 64
"""From this many distinct matches on, :func:`splice` hands them to ``decide_all`` at once."""
_REPLACE_MAX = 256
"""The longest repeated match text :func:`splice` replaces with ``str.replace``."""
_REPLACE_FROM = 64
"""The fewest matches of one repeated text that :func:`splice` replaces with ``str.replace``:
fewer are spliced by slices, which copies each text once instead of searching it twice
(``count`` and ``replace``: some 0.8 ms a pass over a wide MiB, for each of the text, its
lower case and its one-byte copy)."""


def splice(
    text: str,
    matches: list[re.Match[str]],
    decide: Callable[[str, re.Match[str]], str],
    decide_all: Callable[[str, list[re.Match[str]]], list[str]] | None = None,
) -> str:
    """``text`` with each match replaced by ``decide(text, match)``.

    ``matches`` are in order, do not overlap, and their spans index ``text``.
    ``decide`` is called once per distinct match text, for its first
    occurrence, in the order of first occurrences. ``decide_all``, when
    given, decides many distinct matches in one call instead (the same
    results, in the same order).
    """
    return splice_lowered(text, None, matches, decide, decide_all)[0]


def splice_lowered(
    text: str,
    lower: str | None,
    matches: list[re.Match[str]],
    decide: Callable[[str, re.Match[str]], str],
    decide_all: Callable[[str, list[re.Match[str]]], list[str]] | None = None,
    narrow: bytes | None = None,
    edits: list[tuple[int, int, int]] | None = None,
) -> tuple[str, str | None, bytes | None]:
    """:func:`splice`, and the new text lower-cased, made from ``lower`` (``text.lower()``,
    which must lower each character on its own: no capital sigma, no character that lowers
    to two) between the matches and the decisions lower-cased; a second pass of
    ``str.lower`` over a large wide text costs more. None when not made this way.
    Many matches of one repeated text are replaced with ``str.replace`` (each occurrence is
    a match then, see :func:`_replaced`); a few are spliced by slices, the same text.
    Third, from ``narrow`` (the one-byte copy of ``lower``, see :meth:`HintWords.narrow`)
    when given, the one-byte copy of the new lower case, made the same way. ``edits``, when
    given, gets each match's start, end and the length of what replaced it."""
    if not matches:
        return text, lower, narrow
    starts = list(map(re.Match.start, matches))
    ends = list(map(re.Match.end, matches))
    whole = text[starts[0] : ends[0]]
    if _all_are(text, whole, starts, ends):
        new = decide(text, matches[0])
        if new == whole:
            return text, lower, narrow
        many = len(matches) >= _REPLACE_FROM
        done = _replaced(text, whole, new, len(matches)) if many else None
        if done is not None:
            if edits is not None:
                edits.extend(zip(starts, ends, repeat(len(new))))
            if lower is None:
                return done, None, None
            low, new_low = whole.lower(), new.lower()
            done_lower = _replaced(lower, low, new_low, len(matches))
            if done_lower is None or narrow is None:
                return done, done_lower, None
            narrow_low = low.encode("ascii", "replace")
            narrow_new = new_low.encode("ascii", "replace")
            return done, done_lower, _replaced(narrow, narrow_low, narrow_new, len(matches))
        decided = {whole: new}
        wholes = [whole] * len(matches)
    else:
        wholes = list(map(text.__getitem__, map(slice, starts, ends)))
        first = dict(zip(reversed(wholes), reversed(matches), strict=True))
        distinct = list(dict.fromkeys(wholes))
        if decide_all is None or len(distinct) < _DECIDE_ALL:
            decided = {w: decide(text, first[w]) for w in distinct}
        else:
            firsts = list(map(first.__getitem__, distinct))
            decided = dict(zip(distinct, decide_all(text, firsts), strict=True))
    pieces: list[str] = [""] * (2 * len(matches) + 1)
    pieces[0::2] = map(text.__getitem__, map(slice, [0, *ends], [*starts, len(text)]))
    pieces[1::2] = map(decided.__getitem__, wholes)
    if edits is not None:
        edits.extend(zip(starts, ends, map(len, pieces[1::2]), strict=True))
    new_text = "".join(pieces)
    if lower is None:
        return new_text, None, None
    lowered = dict(zip(decided, map(str.lower, decided.values()), strict=True))
    pieces[0::2] = map(lower.__getitem__, map(slice, [0, *ends], [*starts, len(lower)]))
    pieces[1::2] = map(lowered.__getitem__, wholes)
    new_lower = "".join(pieces)
    if narrow is None:
        return new_text, new_lower, None
    narrowed = {w: low.encode("ascii", "replace") for w, low in lowered.items()}
    parts: list[bytes] = [b""] * len(pieces)
    parts[0::2] = map(narrow.__getitem__, map(slice, [0, *ends], [*starts, len(narrow)]))
    parts[1::2] = map(narrowed.__getitem__, wholes)
    return new_text, new_lower, b"".join(parts)


def _replaced(on: AnyStr, old: AnyStr, new: AnyStr, times: int) -> AnyStr | None:
    """``on`` with ``old`` replaced by ``new`` where ``old`` occurs ``times`` times and no
    occurrence of it can overlap another: then those are the matches (their places in
    ``text``, and in its lower case and one-byte copy, which keep places); else None."""
    if len(old) > _REPLACE_MAX or on.count(old) != times:
        return None
    if any(old.endswith(old[:k]) for k in range(1, len(old))):
        return None
    return on.replace(old, new)


def _all_are(text: str, whole: str, starts: list[int], ends: list[int]) -> bool:
    """Whether every span ``starts[i]:ends[i]`` of ``text`` holds ``whole`` (C-level loops)."""
    size = len(whole)
    return all(map(size.__eq__, map(operator.sub, ends, starts))) and all(
        map(text.startswith, repeat(whole), starts)
    )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off meanwhile, on again after when it was on before.

    Threads may overlap: one that found it on turns it on again when it ends, so it
    is never left off by this (only later, when nobody pauses it, is it collected).
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
