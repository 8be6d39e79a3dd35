"""A dense word-led rule's ``split`` with the lower-case ASCII stretch at the end apart.

:func:`split_folded` is ``pattern.split(text)`` for the split forms of
:mod:`aw_lookahead._dense_split`, made faster where a text ends in a long stretch
of ASCII with no capital (a MiB of ``password=…`` after prose): that stretch is
split on its own one-byte copy without ``(?i)``, and, where one name alone can
lead a match there, with that name outside the group of the text before the value.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from typing import Any

from ._ascii_ends import ascii_end, one_byte
from ._split_forms import HEAD, known_head

__all__ = ["Last", "letters_first", "split_folded"]

Last = Callable[[str], int | None]
"""Where a word last is in the lower-cased text (-1: nowhere), or None when not known."""

_UNFOLDED = bytes(
    ord("X") if chr(c).isupper() or c == ord("?") or c > 127 else ord(".") for c in range(256)
)
"""Marks the bytes of a text's one-byte copy that may stand for a character other than its
lower case, or for one that is not ASCII (``?``)."""
_LOOK = 64
"""How much of a text's end and middle :func:`split_folded` looks at before the rest."""


def letters_first(words: tuple[str, ...]) -> bool:
    """Whether each of ``words`` (lead words, as written in a pattern) starts with a letter
    that is not optional: every match led by one of them starts with a letter."""
    return bool(words) and all(w[:1].isalpha() and w[1:2] not in "?*{" for w in words)


@functools.lru_cache(maxsize=64)
def _without_case(source: str) -> re.Pattern[str]:
    """The pattern ``(?i)body`` as ``body``: the same groups, read case-sensitively."""
    return re.compile(source[len("(?i)") :])


def split_folded(
    pattern: re.Pattern[str],
    text: str,
    words: tuple[str, ...],
    starts: tuple[str, ...] = (),
    last: Last | None = None,
    named: list[str] | None = None,
) -> list[str | Any]:
    """``pattern.split(text)``; for a pattern ``(?i)body`` led by ``words``, each led by a
    letter (:func:`letters_first`), that looks behind nowhere (what it matches at a place
    depends on the text from there on), the stretch at the end of ``text`` that is ASCII
    with no capital letter (half of it or more) is split apart, on its own one-byte copy,
    by ``body`` alone, which matches the same there (the pattern is written in lower case,
    as :attr:`Rule.scan` is) with the same groups. The matches before that stretch are read
    one by one, and the stretch starts where the last ends, if later: the scan of ``text``
    then goes on from there as that of the stretch does.

    With ``named`` (a list to fill) and ``last`` (where a word last is in the lower-cased
    text, when known; ``starts``: the text each match led by each of ``words`` starts
    with), where one word alone may lead a match in that stretch (the others' texts are
    known to be nowhere in it), the stretch is split with that word before the group of
    the text before the value (:func:`_known_tail`): the same groups, the text before
    each value there lacking the word, which ``named`` gets per match, and an empty text
    for each match before the stretch (``README.md`` holds six secret names before a MiB
    of ``password=…``: each head one string shorter and the name a literal start, 24.7 →
    22.3 ms for the split).

    The matches before the stretch are those of ``pattern`` tried where one of ``starts``
    is, when given (:func:`_before`).
    """
    source = pattern.pattern
    if not source.startswith("(?i)") or "(?<" in source.replace("(?P<", ""):
        return pattern.split(text)
    middle = len(text) // 2
    for sample in (text[-_LOOK:], text[middle : middle + _LOOK]):  # at little cost, most texts
        if not sample.isascii() or sample != sample.lower():
            return pattern.split(text)
    start = _folded_end(text)
    if not letters_first(words) or 2 * start > len(text):
        return pattern.split(text)
    lower = _without_case(source)
    parts: list[str | Any] = []
    end = 0
    for match in _before(pattern, text, start, starts):
        parts += [text[end : match.start()], *match.groups()]
        end = match.end()
    start = max(start, end)
    word = ""
    if named is not None:
        lower, word = _known_tail(lower, words, _in_tail(words, starts, last, start))
    rest = lower.split(text[start:])
    rest[0] = text[end:start] + (rest[0] or "")
    if named is not None and word:
        step = pattern.groups + 1
        named += [""] * (len(parts) // step) + [word] * (len(rest) // step)
    return parts + rest


def _folded_end(text: str) -> int:
    """Where the stretch at the end of ``text`` with no capital letter and nothing but ASCII
    starts: after the last byte of its one-byte copy that ``_UNFOLDED`` marks. Where the
    text ends in a long ASCII stretch (:func:`~aw_lookahead._ascii_ends.ascii_end`), only
    that stretch is read: the character before it is not ASCII, so marked."""
    end = ascii_end(text)
    if end is None:
        return one_byte(text).translate(_UNFOLDED).rfind(b"X") + 1
    at, tail = end
    return at + tail.encode("ascii").translate(_UNFOLDED).rfind(b"X") + 1


def _before(
    pattern: re.Pattern[str], text: str, start: int, starts: tuple[str, ...]
) -> list[re.Match[str]]:
    """The matches of ``pattern.finditer(text)`` that start before ``start``.

    With ``starts`` (one text for each word leading the pattern, which every match it leads
    starts with, in lower case), ``pattern`` is tried only where one of them is in the
    lower case of ``text[:start]``, in order and none inside a match found, as
    :meth:`~aw_lookahead._match_finding.MatchFinding.sparse` does, instead of a case-insensitive
    scan of every character there (1.4 ms for ``README.md``'s 28 KB). That lower case (to
    where a word starting before ``start`` ends) must keep the places (the caller's texts
    hold no character that case-insensitive matching takes for a letter it does not
    lower-case to); one longer than the text is scanned."""
    reach = start + max(map(len, starts), default=1) - 1  # a word starting before ``start``
    prose = text[:reach].lower() if starts and all(starts) else None
    if prose is None or len(prose) != min(reach, len(text)):
        return list(itertools.takewhile(lambda m: m.start() < start, pattern.finditer(text)))
    places: set[int] = set()
    for first in set(starts):
        at = prose.find(first, 0, start + len(first) - 1)
        while at >= 0:
            places.add(at)
            at = prose.find(first, at + 1, start + len(first) - 1)
    found: list[re.Match[str]] = []
    for at in sorted(places):
        match = pattern.match(text, at) if not found or at >= found[-1].end() else None
        if match is not None:
            found.append(match)
    return found


def _in_tail(
    words: tuple[str, ...], starts: tuple[str, ...], last: Last | None, start: int
) -> tuple[str, ...]:
    """Those of ``words`` that may lead a match from ``start`` on: all but those whose text
    of ``starts`` is known to be nowhere from there on (by ``last``)."""
    if last is None or len(starts) != len(words):
        return words
    kept = []
    for word, first in zip(words, starts, strict=True):
        at = last(first) if first else None
        if at is None or at >= start:
            kept.append(word)
    return tuple(kept) or words


def _known_tail(
    pattern: re.Pattern[str], words: tuple[str, ...], only: tuple[str, ...]
) -> tuple[re.Pattern[str], str]:
    """``pattern`` (``(?P<aw_head0>(?:w1|w2|…)rest``, led by ``words``) as
    ``(?:w)(?P<aw_head0>rest`` with its word ``w`` before the group, when ``only`` is that
    one literal word (of ``words``): the same groups, and where no other word can lead a
    match, the same matches, each head lacking the word. Else ``pattern`` and no word."""
    opening = f"(?P<{HEAD}0>(?:" + "|".join(words) + ")"
    if only == words or not known_head(only, 0) or not pattern.pattern.startswith(opening):
        return pattern, ""
    return _compiled(f"(?:{only[0]})(?P<{HEAD}0>" + pattern.pattern[len(opening) :]), only[0]


@functools.lru_cache(maxsize=64)
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)
