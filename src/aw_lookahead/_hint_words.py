"""Which hint words one large lower-cased text holds, each looked for at most once.

:class:`HintWords` looks for each word once per text, skips a word when one
of its characters or a shorter hint inside it is absent, and tells hints
that only occur inside placeholders (``secret`` in ``[REDACTED_SECRET_…]``)
from real ones. Many words wanted everywhere they are (a rule table's words)
are found in one pass (:meth:`HintWords.learn_places`), and after a rule
replaced a few values, moved to where they are in the new text rather than
looked for again (:meth:`HintWords.after`). Words are found through a
:class:`~aw_lookahead._word_finder.WordFinder`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable

from ._aho_corasick import around_edits, moved
from ._word_finder import AllPlaces, WordFinder

__all__ = ["FEW_EDITS", "HintWords"]

_PLACEHOLDERS = re.compile(r"\[redacted_[a-z0-9_]+\]")
_PLACEHOLDER_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_"
"""What a lower-cased placeholder is written with, besides its brackets."""
_FEW_PLACEHOLDERS = 64
"""Up to this many new placeholders, :meth:`HintWords.after` reads them instead of the text."""
_AT_ONCE = 16
"""From this many words wanted everywhere they are (and not known to be absent: each of
their characters is in the text), :meth:`HintWords.learn_places` finds them in one pass
(about 1.8 ms a MiB; each on its own costs up to a search of the text). A text with fewer
(one of a few letters repeated) keeps the searches, which a missing letter makes cheap."""
_SHORTEST = 3
"""Shorter words (``--``, ``@``) are too common in code and prose to be found at once."""
FEW_EDITS = 1024
"""Up to this many values replaced, :meth:`HintWords.after` moves the places it knows."""


_Chain = tuple[dict[str, list[int]], list[tuple[list[tuple[int, int, int]], dict[str, list[int]]]]]
"""Places of words in an earlier text, and each rewrite since: its edits and the places of
the words overlapping its replacements (see :meth:`HintWords.after`)."""


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
        """Every place of the words :meth:`learn_places` found at once (or moved here)."""
        self._fresh: dict[str, list[int]] = {}
        """Those :meth:`learn_places` found in this text."""
        self._chains: list[_Chain] = []
        """Places found in an earlier text, with the edits since (moved when asked for)."""
        self._gave_up = False
        self._dense: frozenset[str] = frozenset()
        """Words left out of the one pass: the text is too dense with them (searched alone)."""
        self._index: tuple[str, ...] = ()
        """The words of the automaton :meth:`learn_places` ran (and :meth:`after` runs)."""

    def learn_places(self, words: Iterable[str]) -> None:
        """Find every place of ``words`` (lower case) in one pass when at least ``_AT_ONCE``
        of them would each cost a search of the text (ASCII words, no ``?``, not known to be
        absent, of ``_SHORTEST`` characters or more); :meth:`has` and :meth:`places` then
        answer from those places. In a text that holds too many of them (dense), the words
        the samples find most often are left out (:func:`~aw_lookahead._aho_corasick.sparse_words`:
        ``pass`` and ``password`` in a MiB of ``password=…`` pairs) and the others found in
        one pass again, the dense ones searched alone as before; neither this text nor the
        texts after it try the dense ones again. Where that pass too finds too many (or
        fewer than ``_AT_ONCE`` words are left to find), the text is not tried again, nor
        are the texts after it. (Without the second pass, each of the other rules' words
        was a search of the MiB and each rule led by a literal a scan of it: ``README.md``
        before 55k distinct secrets, 61.6 → 55.5 ms.)"""
        if self._gave_up:
            return
        words = {w for w in words if len(w) >= _SHORTEST and w.isascii() and "?" not in w}
        words -= self._dense
        todo = [
            w
            for w in words
            if w not in self._all
            and not self._chained(w)
            and self._found.get(w) is not False
            and all(map(self._has_char, w))
        ]
        if len(todo) < _AT_ONCE:
            return
        # One automaton for all the words asked so far: few words would make its search
        # skip ahead by their first bytes, slower where those are common (5.6 against 1.8
        # ms a MiB of key=value pairs).
        self._index = tuple(sorted(words.union(self._index)))
        found = self._finder.places_of(self._index)
        if found is None and not self._dense:
            rest = self._finder.sparse_words(self._index)
            if len(rest) < len(self._index):
                self._dense = frozenset(self._index).difference(rest)
                self._index = rest
                todo = [w for w in todo if w not in self._dense]
                found = self._finder.places_of(rest) if len(todo) >= _AT_ONCE else None
        if found is None:
            self._gave_up = True
            return
        self._fresh.update({word: found.get(word, []) for word in todo})
        self._learned(self._fresh)

    def knows(self, words: Iterable[str]) -> bool:
        """Whether every place of each of ``words`` is known (found at once, or moved)."""
        return all(self._known(word) is not None for word in words)

    def last_place(self, word: str) -> int | None:
        """Where ``word`` last is in the text (-1: nowhere) when every place of it is known
        (found at once, or moved); None when not known so."""
        places = self._known(word)
        return None if places is None else (places[-1] if places else -1)

    def _chained(self, word: str) -> bool:
        return any(word in base for base, _ in self._chains)

    def _known(self, word: str) -> list[int] | None:
        """Every place of ``word`` when found at once, here or in an earlier text (then moved
        through the edits since, see :meth:`after`); None when not known so."""
        places = self._all.get(word)
        if places is None:
            for base, steps in self._chains:
                if word in base:
                    places = base[word]
                    for edits, around in steps:
                        places = moved(places, len(word), edits, around.get(word))
                    self._learned({word: places})
                    break
        return places

    def _learned(self, found: dict[str, list[int]]) -> None:
        """Keep every place of each word of ``found``."""
        self._all.update(found)
        for word, places in found.items():
            self._found[word] = bool(places)
            self._first[word] = places[0] if places else -1

    def after(
        self,
        lower: str,
        placeholders: Collection[str],
        narrow: bytes | None = None,
        edits: list[tuple[int, int, int]] | None = None,
    ) -> HintWords:
        """The hint words of ``lower``: this text with values replaced by ``placeholders``
        (``narrow``: its one-byte copy, when already made). ``edits``, when given, are
        where (see :func:`~aw_lookahead._aho_corasick.around_edits`): up to ``FEW_EDITS``
        of them, the places :meth:`learn_places` found are moved (when asked for), not
        looked for again.

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
        new._dense = self._dense
        new._index = self._index
        chains = [*self._chains, *([(self._fresh, [])] if self._fresh else [])]
        if edits is not None and chains and len(edits) <= FEW_EDITS:
            around = around_edits(self._index, edits, lower)
            new._chains = [(base, [*steps, (edits, around)]) for base, steps in chains]
        if edits is not None and stretches and len(edits) <= FEW_EDITS:
            added = "".join(placeholders).lower().encode("ascii", "replace")
            new._finder.carry_stretches(self._finder, edits, frozenset(added))
        if len(placeholders) > _FEW_PLACEHOLDERS:
            return new
        marks = "\n".join(placeholders).lower()
        for hint, found in self._found.items():
            if not found and "[" not in hint and "]" not in hint and not new._chained(hint):
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
        if found is None and self._known(word) is not None:
            return self._found[word]
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
        known = self._known(word)
        if known is not None:
            return (known[0] if known else -1), AllPlaces(known)
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
