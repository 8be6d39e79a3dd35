"""Where each of many ASCII words is in a one-byte text, found in one pass.

A rule table's hint words and anchors are some eighty words; looking for each
with ``bytes.find`` costs a pass over a megabyte per word that is absent (and
one per occurrence for an anchor). An Aho–Corasick automaton (``ahocorasick_rs``,
Rust) finds every occurrence of all of them in one pass, about 2 ms a megabyte
of ordinary text. What it cannot bound is the number of occurrences: a text
dense with secrets holds a hint every few characters, and a Python tuple per
occurrence would cost more than the searches it saves. So the text is read in
stretches, and the pass gives up (None) past :data:`MOST_PLACES` occurrences:
the caller then searches word by word, having lost at most the cost of those.
The known secrets of :mod:`aw_lookahead._seen_secrets` use the same library.
"""

from __future__ import annotations

import bisect
import collections
import functools
import itertools
import operator
import sys
from collections.abc import Iterable
from itertools import repeat

from ahocorasick_rs import BytesAhoCorasick, Implementation

__all__ = ["MOST_PLACES", "around_edits", "indexable", "moved", "sparse_words", "word_places"]

MOST_PLACES = 8192
"""Past this many occurrences in one text (or one per 128 characters of a longer one: a MiB of
this repository's code or prose holds 3,100 to 5,000), :func:`word_places` gives up."""
_STRETCH = 16384
_EDITS_PER_PLACE = 4
"""Past one edit per this many places of a word, :func:`moved` goes place by place."""
_SAMPLES = 8
_SAMPLE = 2048
"""Eight samples of this many characters, spread over the text, tell a text holding far more
places than the limit (twice as many, by them) before the pass: it is not made."""


def indexable(*words: Iterable[str]) -> tuple[str, ...]:
    """Those of ``words`` the automaton takes (ASCII, no ``?``: see
    :class:`~aw_lookahead._word_finder.WordFinder`), each once, in order."""
    return tuple(sorted({w for each in words for w in each if w.isascii() and "?" not in w}))


@functools.lru_cache(maxsize=16)
def _automaton(words: tuple[str, ...]) -> tuple[BytesAhoCorasick, int]:
    """The automaton of ``words`` (ASCII, each at its index) and the longest one's length."""
    # A DFA: three times as fast as the default NFA for the rule table's 119 words.
    encoded = [w.encode("ascii") for w in words]
    return BytesAhoCorasick(encoded, implementation=Implementation.DFA), max(map(len, words))


def sparse_words(narrow: bytes, words: tuple[str, ...]) -> tuple[str, ...]:
    """Those of ``words`` (ASCII, distinct, sorted) left when the ones that the samples of
    :func:`word_places` find most often are dropped, until the rest would be found, by
    the samples, at no more places than it allows; ``words`` when the text is too short to
    be sampled."""
    step = len(narrow) // _SAMPLES
    if not words or step <= _SAMPLE:
        return words
    automaton, _ = _automaton(words)
    counts = collections.Counter[int]()
    for at in range(0, _SAMPLES * step, step):
        found = automaton.find_matches_as_indexes(narrow[at : at + _SAMPLE], overlapping=True)
        counts.update(map(operator.itemgetter(0), found))
    most = max(MOST_PLACES, len(narrow) // 128)
    left, total = set(range(len(words))), counts.total()
    for index in sorted(left, key=counts.__getitem__, reverse=True):
        if total * step <= most * _SAMPLE:
            break
        left.discard(index)
        total -= counts[index]
    return tuple(words[index] for index in sorted(left))


def word_places(narrow: bytes, words: tuple[str, ...]) -> dict[str, list[int]] | None:
    """For each of ``words`` (ASCII, distinct) found in ``narrow``, where it starts (every
    occurrence, overlapping ones too, in order: what repeated ``narrow.find(word, at + 1)``
    gives); a word that is absent has no entry. None past :data:`MOST_PLACES` occurrences (or
    one per 128 characters), or where samples of the text say it holds far more."""
    if not words:
        return {}
    automaton, longest = _automaton(words)
    most = max(MOST_PLACES, len(narrow) // 128)
    step = len(narrow) // _SAMPLES
    if step > _SAMPLE:
        samples = (narrow[at : at + _SAMPLE] for at in range(0, _SAMPLES * step, step))
        seen = sum(len(automaton.find_matches_as_indexes(s, overlapping=True)) for s in samples)
        if seen * step > 2 * most * _SAMPLE:
            return None
    stretches: list[tuple[int, list[tuple[int, int, int]]]] = []
    count = 0
    for low in range(0, len(narrow), _STRETCH):
        stretch = narrow[low : low + _STRETCH + longest - 1]
        found = automaton.find_matches_as_indexes(stretch, overlapping=True)
        count += len(found)
        if count > most:
            return None
        stretches.append((low, found))
    places: dict[int, list[int]] = {}
    for low, found in stretches:
        for index, start, _ in found:
            if start < _STRETCH:
                places.setdefault(index, []).append(low + start)
    return {words[index]: sorted(at) for index, at in places.items()}


def around_edits(
    words: tuple[str, ...], edits: list[tuple[int, int, int]], lower: str
) -> dict[str, list[int]]:
    """Where each of ``words`` (ASCII, sorted) overlaps a replacement in a text that
    ``edits`` made: each edit (in order, apart) replaced the span ``start:end`` of the text
    before with a text of the given length; ``lower`` is the new text's lower case. One
    pass over the stretches around the replacements, joined."""
    automaton, longest = _automaton(words)
    lows: list[int] = []
    spans: list[tuple[int, int]] = []
    windows: list[str] = []
    added = 0
    for start, end, size in edits:
        at, stop = start + added, start + added + max(size, 1)  # a removal: across its place
        added += size - (end - start)
        lows.append(max(at - longest + 1, 0))
        spans.append((at, stop))
        windows.append(lower[lows[-1] : stop + longest - 1])
    starts = [0, *itertools.accumulate(len(w) + 1 for w in windows)]
    joined = "\0".join(windows).encode("ascii", "replace")  # no word holds a NUL
    found: dict[str, set[int]] = {}
    for index, begin, finish in automaton.find_matches_as_indexes(joined, overlapping=True):
        which = bisect.bisect_right(starts, begin) - 1
        at, stop = spans[which]
        place = lows[which] + begin - starts[which]
        if place < stop and place + finish - begin > at:
            found.setdefault(words[index], set()).add(place)
    return {word: sorted(places) for word, places in found.items()}


def moved(
    old: list[int], size: int, edits: list[tuple[int, int, int]], around: list[int] | None
) -> list[int]:
    """The places ``old`` of a word of ``size`` characters in the text that ``edits`` made
    (see :func:`around_edits`, which gives ``around``: its places overlapping a
    replacement): each place outside the replaced spans moves by what the edits before it
    added, those overlapping a span are gone."""
    if len(edits) * _EDITS_PER_PLACE > len(old):
        kept = _moved_each(old, size, edits)
    else:
        kept = []
        done = added = 0
        for start, end, grown in edits:
            kept += map(added.__add__, old[done : bisect.bisect_left(old, start - size + 1)])
            done = max(done, bisect.bisect_left(old, end))
            added += grown - (end - start)
        kept += map(added.__add__, old[done:])
    return sorted({*kept, *around}) if around else kept


def _moved_each(old: list[int], size: int, edits: list[tuple[int, int, int]]) -> list[int]:
    """:func:`moved` without ``around``, place by place (C-level passes): for many edits
    and few places, where going edit by edit would cost more."""
    ends = [end for _, end, _ in edits]
    nexts = [start for start, _, _ in edits] + [sys.maxsize]  # the edit after each place
    added = [0, *itertools.accumulate(grown - (end - start) for start, end, grown in edits)]
    after = list(map(bisect.bisect_right, repeat(ends), old))  # edits ending at or before
    apart = map(operator.le, map(size.__add__, old), map(nexts.__getitem__, after))
    return list(itertools.compress(map(operator.add, old, map(added.__getitem__, after)), apart))
