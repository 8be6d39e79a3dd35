"""What keeps redacting a large text cheap: hint words looked for once, splicing in bulk.

A megabyte of tool output is checked for some seventy hint words;
:class:`HintWords` looks for each word once per text, skips a word when one
of its characters or a shorter hint inside it is absent, and tells hints
that only occur inside placeholders (``secret`` in ``[REDACTED_SECRET_…]``)
from real ones. Input made of nothing but secrets has a match every few
characters: :func:`splice` decides each distinct match text once (many at
once through ``decide_all``) and puts the text back together with C-level
iteration (``map``, ``dict``, ``str.join``), or with one ``str.replace``
when all matches are one repeated text. (A rule's own bulk reading, texts
instead of match objects, is :meth:`~aw_lookahead._redact_rules.Rule.bulk`.)
:func:`collector_paused` keeps the cyclic garbage collector off meanwhile.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import operator
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from itertools import repeat
from typing import AnyStr

from ._word_finder import WordFinder, next_of

__all__ = [
    "BULK_CHARS",
    "HintWords",
    "collector_paused",
    "rewrite_all",
    "splice",
    "splice_lowered",
]

BULK_CHARS = 4096
"""Texts from this length on are worth :class:`HintWords`; shorter ones search directly."""
_PLACEHOLDERS = re.compile(r"\[redacted_[a-z0-9_]+\]")
_PLACEHOLDER_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
"""What a lower-cased placeholder is written with, besides its brackets."""
_FEW_PLACEHOLDERS = 64
"""Up to this many new placeholders, :meth:`HintWords.after` reads them instead of the text."""
_DECIDE_ALL = 64
"""From this many distinct matches on, :func:`splice` hands them to ``decide_all`` at once."""
_REPLACE_MAX = 256
"""The longest repeated match text :func:`splice` replaces with ``str.replace``."""
_AT_ONCE = 4
"""From this many words wanted everywhere they are, :meth:`HintWords.learn_places` finds
them in one pass (each on its own costs about a search of the text)."""


@functools.cache
def _inner_hints(vocabulary: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """For each hint, the other hints inside it: when one of those is absent, so is it."""
    return {h: tuple(o for o in vocabulary if o != h and o in h) for h in vocabulary}


class HintWords:
    """Which hint words one lower-cased text holds, each looked for at most once.

    ``vocabulary`` is every hint of the rule table. A placeholder's words hint
    nothing for a rule whose hints are in its matches (no built-in pattern can
    match inside a placeholder); for a rule whose hints are context
    (``near``), they count. Words are found through a
    :class:`~aw_lookahead._word_finder.WordFinder` (``narrow``: the text's one-byte
    copy when made; ``stretches``: whether it may read the characters of each stretch).
    """

    def __init__(
        self,
        lower: str,
        ascii_only: bool,
        vocabulary: frozenset[str],
        narrow: bytes | None = None,
        *,
        stretches: bool = True,
    ) -> None:
        self._lower = lower
        self._ascii_only = ascii_only
        self._vocabulary = vocabulary
        self._inner = _inner_hints(vocabulary)
        self._found: dict[str, bool] = {}
        self._outside: dict[str, bool] = {}
        self._stripped: str | None = None
        self._chars: dict[str, bool] = {}
        self._finder = WordFinder(lower, ascii_only, narrow, stretches=stretches)
        self._gone: frozenset[str] = frozenset()
        """Characters absent from the text outside placeholders (absent before they came)."""
        self._first: dict[str, int] = {}
        self._all: dict[str, list[int]] = {}
        """Every place of the words :meth:`learn_places` found at once."""
        self._gave_up = False

    def learn_places(self, words: Iterable[str]) -> None:
        """Find every place of ``words`` (lower case) in one pass when at least ``_AT_ONCE``
        of them would each cost a search of the text (ASCII words, no ``?``, not known to be
        absent); :meth:`has` and :meth:`places` then answer from those places. A text that
        holds too many of them (dense) is not tried again, nor are the texts after it."""
        if self._gave_up:
            return
        todo = tuple(
            sorted(
                {
                    w
                    for w in words
                    if w not in self._all
                    and w.isascii()
                    and "?" not in w
                    and self._found.get(w) is not False
                    and all(map(self._has_char, w))
                }
            )
        )
        if len(todo) < _AT_ONCE:
            return
        found = self._finder.places_of(todo)
        if found is None:
            self._gave_up = True
            return
        for word in todo:
            places = self._all[word] = found.get(word, [])
            self._found[word] = bool(places)
            self._first[word] = places[0] if places else -1

    def after(
        self, lower: str, placeholders: Collection[str], narrow: bytes | None = None
    ) -> HintWords:
        """The hint words of ``lower``: this text with values replaced by ``placeholders``
        (``narrow``: its one-byte copy, when already made).

        A word this text lacks can only have come with a placeholder (none of them
        holds a bracket, so none can straddle one's edge): those are known without
        a search of ``lower`` when the placeholders are few; the words this text
        held are looked for again.
        """
        stretches = not self._finder.uniform  # a text read by stretches is read so again
        new = HintWords(lower, self._ascii_only, self._vocabulary, narrow, stretches=stretches)
        gone = (c for c in _PLACEHOLDER_CHARS if c not in self._gone and not self._has_char(c))
        new._gone = self._gone.union(gone)
        new._gave_up = self._gave_up  # a text dense with the words stays dense
        if len(placeholders) > _FEW_PLACEHOLDERS:
            return new
        marks = "\n".join(placeholders).lower()
        for hint, found in self._found.items():
            if not found and "[" not in hint and "]" not in hint:
                new._found[hint] = hint in marks
                new._outside[hint] = False
        return new

    def any(self, hints: tuple[str, ...], *, near: bool) -> bool:
        """Whether one of ``hints`` is in the text (outside placeholders unless ``near``)."""
        for hint in hints:
            if self._ascii_only and not hint.isascii():
                continue
            if not near and "[" not in hint and "]" not in hint and self._gone_outside(hint):
                continue
            if self._has(hint) and (near or self._has_outside(hint)):
                return True
        return not hints

    def outside(self, word: str) -> bool:
        """Whether ``word`` (lower case) is in the text outside placeholders (see :meth:`any`)."""
        return self.any((word,), near=False)

    def _gone_outside(self, word: str) -> bool:
        """Whether a character of ``word`` is absent outside placeholders (then so is it)."""
        return any(c in self._gone or not self._has_char(c) for c in word)

    def has(self, word: str) -> bool:
        """Whether ``word`` (lower case, a hint or not) is in the text; each word searched once.

        A word is not searched for when one of its characters is absent (one
        ``memchr`` per character, far cheaper than a search for the word) or a
        hint inside it is known to be absent.
        """
        found = self._found.get(word)
        if found is None:
            inner = self._inner.get(word, ())
            found = (
                all(map(self._has_char, word))
                and not any(self._found.get(h) is False for h in inner)
                and self._search(word)
            )
            self._found[word] = found
        return found

    def _search(self, word: str) -> bool:
        """``word in`` the text (where it first is is kept, see :meth:`places`)."""
        at = self._first[word] = self._finder.finder(word)(0)
        return at >= 0

    _has = has

    def places(self, word: str) -> tuple[int, Callable[[int], int]]:
        """Where ``word`` (lower case) first is in the text (-1: nowhere), and
        ``lower.find(word, start)`` as a function of ``start``, each the fastest way this
        text allows: the first place is kept from :meth:`has`; an ASCII word is looked for
        as :class:`~aw_lookahead._word_finder.WordFinder` allows (or from the places
        :meth:`learn_places` found)."""
        known = self._all.get(word)
        if known is not None:
            return (known[0] if known else -1), functools.partial(next_of, known)
        if not self.has(word):
            return -1, self._finder.finder(word)
        find = self._finder.finder(word)
        at = self._first.get(word)
        if at is None:
            at = self._first[word] = find(0)
        return at, find

    @property
    def narrow_made(self) -> bytes | None:
        """:meth:`narrow` when it has been made, else None (it is not made for this)."""
        return self._finder.narrow_made

    def narrow(self) -> bytes:
        """The text in one byte a character: ASCII as it is, each wider character a ``?``."""
        return self._finder.narrow()

    def _has_char(self, char: str) -> bool:
        found = self._chars.get(char)
        if found is None:
            found = self._chars[char] = self._finder.has_char(char)
        return found

    def _has_outside(self, hint: str) -> bool:
        """Whether ``hint`` (which holds no bracket) occurs outside every placeholder.

        Its occurrences are looked at from the first on, each inside a placeholder
        skipped (the placeholder around one starts at the last ``[`` before it), so
        a hint that occurs outside is told by a search or two instead of a copy of
        the text without placeholders, made only past ``_FEW_PLACEHOLDERS`` of them.
        """
        lower = self._lower
        if not self.has("[redacted_"):
            return True
        found = self._outside.get(hint)
        if found is None:
            at, find = self.places(hint)
            for _ in range(_FEW_PLACEHOLDERS):
                if at < 0:
                    found = False
                    break
                around = _PLACEHOLDERS.match(lower, max(lower.rfind("[", 0, at), 0))
                if around is None or around.end() <= at:
                    found = True
                    break
                at = find(around.end())
            else:
                if self._stripped is None:
                    self._stripped = _PLACEHOLDERS.sub("", lower)
                found = hint in self._stripped
            self._outside[hint] = found
        return found


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
) -> tuple[str, str | None, bytes | None]:
    """:func:`splice`, and the new text lower-cased, made from ``lower`` (``text.lower()``,
    which must lower each character on its own: no capital sigma, no character that lowers
    to two) between the matches and the decisions lower-cased; a second pass of
    ``str.lower`` over a large wide text costs more. None when not made this way.
    Third, from ``narrow`` (the one-byte copy of ``lower``, see :meth:`HintWords.narrow`)
    when given, the one-byte copy of the new lower case, made the same way."""
    if not matches:
        return text, lower, narrow
    starts = list(map(re.Match.start, matches))
    ends = list(map(re.Match.end, matches))
    whole = text[starts[0] : ends[0]]
    if _all_are(text, whole, starts, ends):
        new = decide(text, matches[0])
        if new == whole:
            return text, lower, narrow
        done = _replaced(text, whole, new, len(matches))
        if done is not None:
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


def rewrite_all(
    text: str, firsts: list[re.Match[str]], decide: Callable[[str, re.Match[str]], str]
) -> str | None:
    """``text`` with every occurrence of each match text of ``firsts`` replaced by its
    decision (see :meth:`~aw_lookahead._secret_rule.Rule.bulk`); None when a replacement
    holds a match text replaced after it (then each match is rewritten where it is instead)."""
    rewrites = [(text[m.start() : m.end()], decide(text, m)) for m in firsts]
    rewrites = [(old, new) for old, new in rewrites if old != new]
    for i, (_, new) in enumerate(rewrites):
        if any(later in new for later, _ in rewrites[i + 1 :]):
            return None
    for old, new in rewrites:
        text = text.replace(old, new)
    return text


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
