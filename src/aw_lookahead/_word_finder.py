"""Where words are in one large lower-cased text, found with as little scanning as it allows.

Each search of a megabyte costs a pass over it, and a table of some seventy
hint words and anchors would cost as many passes. :class:`WordFinder` gives
``lower.find(word, start)`` for a word more cheaply where the text allows:
an ASCII word is looked for in a one-byte copy of a wide text; a word holding
a wider character is read from where those characters are, when the text has
few (one pass for all such words and their characters); and a word is looked
for only in the stretches that hold each of its characters (the byte values of
each stretch of ``_STRETCH`` characters are read once, a few ``bytes.translate``
passes in all): a text of prose followed by dense secrets, say, is searched
for most words in the prose alone. Where many words are wanted everywhere they
are (a rule's anchors), :meth:`WordFinder.places_of` finds them all in one
pass of an automaton (:func:`~aw_lookahead._aho_corasick.word_places`).
:class:`~aw_lookahead._bulk_redaction.HintWords` keeps what was found.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable

from ._aho_corasick import sparse_words, word_places
from ._ascii_ends import one_byte

__all__ = ["AllPlaces", "WordFinder", "next_of"]

_FEW_WIDE = 4096
"""Up to this many wider characters (and question marks), where each is is known."""
_STRETCH = 16384
"""The characters of each stretch this long are known (in texts of four or more)."""
_LETTERS = frozenset(b"abcdefghijklmnopqrstuvwxyz")
_SAMPLE = 4096
_APART = 8
"""Stretches that differ in this many letters (prose, then a dump of secrets) are read."""


def _nowhere(start: int) -> int:
    return -1


def next_of(places: list[int], start: int) -> int:
    """The first of ``places`` (in order) from ``start`` on; -1 when none."""
    at = bisect.bisect_left(places, start)
    return places[at] if at < len(places) else -1


class AllPlaces:
    """``lower.find(word, start)`` as a function of ``start``, from every place of the word
    (``places``, in order), which a caller may also read at once."""

    __slots__ = ("places",)

    def __init__(self, places: list[int]) -> None:
        self.places = places

    def __call__(self, start: int) -> int:
        return next_of(self.places, start)


def _find_in(
    find: Callable[[str | bytes, int, int], int],
    word: str | bytes,
    windows: list[tuple[int, int]],
    ends: list[int],
    start: int,
) -> int:
    """``find(word, start)`` where occurrences can only lie inside ``windows`` (in order,
    apart; ``ends``: their ends)."""
    at = bisect.bisect_right(ends, start)
    for low, high in windows[at:]:
        found = find(word, max(low, start), high)
        if found >= 0:
            return found
    return -1


def _bytes_of(stretch: bytes) -> frozenset[int]:
    """The byte values ``stretch`` holds: a few ``bytes.translate`` passes, each deleting the
    values seen at the start of what is left."""
    seen: set[int] = set()
    rest = stretch
    while rest:
        new = set(rest[:64])
        seen |= new
        rest = rest.translate(None, bytes(new))
    return frozenset(seen)


class WordFinder:
    """``lower.find(word, start)`` as a function of ``start``, per word (:meth:`finder`).

    ``lower`` is a lower-cased text (``ascii_only``: it is ASCII); ``narrow`` its
    one-byte copy (each wider character a ``?``) when already made. ``stretches``:
    whether the characters of each stretch may be read (see :meth:`_stretch_pairs`).
    """

    def __init__(
        self, lower: str, ascii_only: bool, narrow: bytes | None = None, *, stretches: bool = True
    ) -> None:
        self._lower = lower
        self._ascii_only = ascii_only
        self._narrow = narrow
        self._wide: dict[str, list[int]] | None = None
        self._wide_made = False
        self._pairs: list[frozenset[int]] | None = None
        self._common: frozenset[int] = frozenset()
        self._pairs_made = not stretches

    @property
    def uniform(self) -> bool:
        """Whether its stretches were not read: the text was found not to need it (or, made
        with ``stretches`` false, never may)."""
        return self._pairs_made and self._pairs is None

    @property
    def narrow_made(self) -> bytes | None:
        """:meth:`narrow` when it has been made, else None (it is not made for this)."""
        return self._narrow

    def narrow(self) -> bytes:
        """The text in one byte a character: ASCII as it is, each wider character a ``?``."""
        if self._narrow is None:
            self._narrow = one_byte(self._lower)
        return self._narrow

    def places_of(self, words: tuple[str, ...]) -> dict[str, list[int]] | None:
        """Every place of each of ``words`` (ASCII, no ``?``, distinct; those found have an
        entry), what repeated ``lower.find(word, at + 1)`` gives, from one pass over the
        text (its one-byte copy where it is wide); None where the text holds too many."""
        on = self._lower.encode("ascii") if self._ascii_only else self.narrow()
        return word_places(on, words)

    def sparse_words(self, words: tuple[str, ...]) -> tuple[str, ...]:
        """Those of ``words`` (as for :meth:`places_of`) left when the ones the text is
        densest with are dropped (see :func:`~aw_lookahead._aho_corasick.sparse_words`)."""
        on = self._lower.encode("ascii") if self._ascii_only else self.narrow()
        return sparse_words(on, words)

    def has_char(self, char: str) -> bool:
        """Whether ``char`` is in the text (a wider one read from where they are, if known)."""
        index = None if self._ascii_only or char.isascii() else self._wide_index()
        return char in (self._lower if index is None else index)

    def finder(self, word: str) -> Callable[[int], int]:
        """``lower.find(word, start)`` as a function of ``start`` (see the module)."""
        if "?" in word or (self._ascii_only and not word.isascii()):
            return functools.partial(self._lower.find, word)
        if word.isascii():
            on: str | bytes = self._lower if self._ascii_only else self.narrow()
            key: str | bytes = word if self._ascii_only else word.encode()
            windows = self._windows(word)
            if windows is None:
                return functools.partial(on.find, key)  # type: ignore[arg-type]
            if not windows:
                return _nowhere
            ends = [high for _, high in windows]
            return functools.partial(_find_in, on.find, key, windows, ends)  # type: ignore[arg-type]
        index = self._wide_index()
        if index is None:
            return functools.partial(self._lower.find, word)
        at = next(i for i, c in enumerate(word) if not c.isascii())
        places = [p - at for p in index.get(word[at], ()) if p >= at]
        return functools.partial(next_of, [p for p in places if self._lower.startswith(word, p)])

    def _windows(self, word: str) -> list[tuple[int, int]] | None:
        """Where an occurrence of ASCII ``word`` can lie: for each stretch whose characters
        and the next stretch's hold all of the word's, from its start to its end plus the
        word's length less one (an occurrence starting in a stretch ends in it or the next);
        merged where they meet. None: anywhere (the text is short, the word long, or the
        stretches that may hold it are half the text or more)."""
        pairs = self._stretch_pairs()
        need = frozenset(word.encode())
        if pairs is None or need <= self._common or len(word) > _STRETCH:
            return None
        windows: list[tuple[int, int]] = []
        size = len(self._lower)
        for i, chars in enumerate(pairs):
            if need <= chars:
                low, high = i * _STRETCH, min((i + 1) * _STRETCH + len(word) - 1, size)
                if windows and windows[-1][1] >= low:
                    windows[-1] = (windows[-1][0], high)
                else:
                    windows.append((low, high))
        if 2 * sum(high - low for low, high in windows) >= size:
            return None  # a plain search is as fast
        return windows

    def _stretch_pairs(self) -> list[frozenset[int]] | None:
        """For each stretch of ``_STRETCH`` characters, the byte values it and the next one
        hold (in the one-byte copy); None for a text of fewer than four stretches, or
        where no two of its first, middle and last ``_SAMPLE`` characters differ in
        ``_APART`` letters or more (then the stretches are taken to hold much the same:
        reading them all would cost more than it saves)."""
        if not self._pairs_made:
            self._pairs_made = True
            size = len(self._lower)
            ends = [self._lower[at : at + _SAMPLE] for at in (0, size // 2, size - _SAMPLE)]
            letters = [_LETTERS & _bytes_of(end.encode("ascii", "replace")) for end in ends]
            apart = max(len(a ^ b) for a in letters for b in letters)
            if size >= 4 * _STRETCH and apart >= _APART:
                on = self.narrow()
                each = [_bytes_of(on[i : i + _STRETCH]) for i in range(0, len(on), _STRETCH)]
                self._pairs = [a | b for a, b in zip(each, [*each[1:], frozenset()], strict=True)]
                self._common = frozenset.intersection(*self._pairs)
        return self._pairs

    def carry_stretches(
        self, old: WordFinder, edits: list[tuple[int, int, int]], added: frozenset[int]
    ) -> None:
        """Take the stretch pairs of ``old`` (this text before ``edits``: the start, end and
        new length of each, in ``old``'s places, in order, apart) instead of reading them
        again, each widened by its neighbours and, about the edits, by ``added`` (the bytes
        of what was put in, lower-cased, one-byte), when no character moved by a stretch or
        more (nor sits that far from where it was in a replaced match): then each stretch of
        this text holds only bytes of the stretches about it in ``old`` or of ``added``, and
        the pairs hold all it and the next hold (more only widens the windows searched)."""
        if self._pairs_made or not old._pairs_made or old._pairs is None:
            return
        shift, reach, touched = 0, 0, set[int]()
        for start, end, size in edits:
            at = start + shift  # where it was put, in this text
            reach = max(reach, abs(shift) + max(size, end - start))
            touched.update(range(at // _STRETCH, (at + max(size, 1) - 1) // _STRETCH + 1))
            shift += size - (end - start)
        if max(reach, abs(shift)) >= _STRETCH:
            return
        before, none = old._pairs, frozenset[int]()
        count = len(range(0, len(self._lower), _STRETCH))
        around = [before[j] if 0 <= j < len(before) else none for j in range(-1, count + 1)]
        near = [added if i in touched or i + 1 in touched else none for i in range(count)]
        self._pairs = list(map(frozenset.union, around, around[1:], around[2:], near))
        self._common = frozenset.intersection(*self._pairs) if self._pairs else none
        self._pairs_made = True

    def _wide_index(self) -> dict[str, list[int]] | None:
        """Where each character wider than ASCII is in the text (in order), when the
        one-byte copy holds at most ``_FEW_WIDE`` question marks (they stand for those
        characters, and for themselves); else None."""
        if not self._wide_made:
            self._wide_made = True
            narrow = self.narrow()
            if narrow.count(b"?") <= _FEW_WIDE:
                index: dict[str, list[int]] = {}
                at = narrow.find(b"?")
                while at >= 0:
                    char = self._lower[at]
                    if char != "?":
                        index.setdefault(char, []).append(at)
                    at = narrow.find(b"?", at + 1)
                self._wide = index
        return self._wide
