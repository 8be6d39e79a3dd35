"""Many matches of one rule rewritten by their values, with C-level iteration only.

A text dense with secrets (55k in a MiB, most of them distinct) spends its
time in per-match work, not in the regex. :func:`values_of` reduces each
match to its value with one C-level pass per field (``map`` over match
methods, no Python call per match) and :func:`splice_values` puts the text
back together from the stretches between values and the values' stand-ins:
what lies in a match around its value is kept as it is.

A dense rule led by secret names (``password=…``, ``"token": "…"``) is read
without match objects at all: :func:`~aw_lookahead._dense_split.split_values`
runs one ``split`` of its pattern. Which value gets which stand-in is decided by the caller
(:class:`~aw_lookahead._rule_application.RuleApplication`), once per
distinct value.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from itertools import compress, filterfalse, islice, repeat

from ._secret_rule import Rule

__all__ = [
    "apart_from",
    "first_new",
    "places_starting_with",
    "rewrite_all",
    "splice_values",
    "starting_with",
    "values_of",
    "with_places",
    "without_places",
]

_FEW_STARTING = 64
"""Up to this many values starting with a prefix, :func:`places_starting_with` finds them."""
_LAST_GROUP = operator.attrgetter("lastgroup")
_STRING = operator.attrgetter("string")


def values_of(
    rule: Rule, text: str, matches: list[re.Match[str]]
) -> tuple[list[str], list[int], list[int]]:
    """The value of each match (what :meth:`Rule.value_span` points at), its start and stop.

    ``matches`` index ``text`` (a scan's matches are on its lower case, with the same
    spans: the values are read from ``text`` then). A value group is read for all
    matches at once: the one group of the rule, or with several, the group each match
    closed last (``lastgroup``), once it is known that no value group before it in
    :attr:`Rule.groups` took part in that match (then it is the first non-empty one
    when it is not empty). Where that is not so for some match (an empty or absent
    group, another group closed last), every span comes from :meth:`Rule.value_span`,
    one call each.
    """
    groups = rule.groups
    names: Sequence[str | int] = [groups[0] if groups else 0] * len(matches)
    if len(groups) > 1:
        last = list(map(_LAST_GROUP, matches))
        if not set(last) <= set(groups) or _earlier_took_part(groups, matches, last):
            return _one_by_one(rule, text, matches)
        names = last
    starts = list(map(re.Match.start, matches, names))
    stops = list(map(re.Match.end, matches, names))
    if all(map(operator.is_, map(_STRING, matches), repeat(text))):
        values = list(map(re.Match.group, matches, names))
    else:
        values = list(map(text.__getitem__, map(slice, starts, stops)))
    if not all(values):  # an empty value (or an absent group) means the whole match
        return _one_by_one(rule, text, matches)
    return values, starts, stops


def _earlier_took_part(
    groups: tuple[str, ...], matches: list[re.Match[str]], names: list[str]
) -> bool:
    """Whether in some match a value group listed before the one it closed last took part."""
    closed = set(names)
    for i, group in enumerate(groups[:-1]):
        later = closed.intersection(groups[i + 1 :])
        if not later:
            continue
        closed_later = list(compress(matches, map(later.__contains__, names)))
        if closed_later and max(map(re.Match.end, closed_later, repeat(group))) >= 0:
            return True
    return False


def _one_by_one(
    rule: Rule, text: str, matches: list[re.Match[str]]
) -> tuple[list[str], list[int], list[int]]:
    """:func:`values_of` through :meth:`Rule.value_span`, one call per match."""
    spans = list(map(rule.value_span, matches))
    starts = list(map(operator.itemgetter(0), spans))
    stops = list(map(operator.itemgetter(1), spans))
    return list(map(text.__getitem__, map(slice, starts, stops))), starts, stops


def splice_values(
    text: str,
    lower: str | None,
    narrow: bytes | None,
    starts: list[int],
    stops: list[int],
    stand_ins: list[str],
    distinct: Collection[str],
) -> tuple[str, str | None, bytes | None]:
    """``text`` with ``text[starts[i]:stops[i]]`` replaced by ``stand_ins[i]`` (spans in order,
    not overlapping), and, from ``lower`` and ``narrow`` when given (as for
    :func:`~aw_lookahead._bulk_redaction.splice_lowered`: its lower case, lowered character
    by character, and the one-byte copy of that), the new text's lower case and one-byte copy.
    ``distinct`` holds each stand-in once; stand-ins are placeholders (ASCII)."""
    cuts: Iterable[slice] = map(slice, [0, *stops], [*starts, len(text)])
    if lower is not None:
        cuts = list(cuts)
    pieces: list[str] = [""] * (2 * len(starts) + 1)
    pieces[0::2] = map(text.__getitem__, cuts)
    pieces[1::2] = stand_ins
    new = "".join(pieces)
    if lower is None:
        return new, None, None
    lowered = {s: s.lower() for s in distinct}
    pieces[0::2] = map(lower.__getitem__, cuts)
    pieces[1::2] = map(lowered.__getitem__, stand_ins)
    new_lower = "".join(pieces)
    if narrow is None:
        return new, new_lower, None
    narrowed = {s: low.encode("ascii") for s, low in lowered.items()}
    parts: list[bytes] = [b""] * len(pieces)
    parts[0::2] = map(narrow.__getitem__, cuts)
    parts[1::2] = map(narrowed.__getitem__, stand_ins)
    return new, new_lower, b"".join(parts)


def rewrite_all(
    text: str, firsts: list[re.Match[str]], decide: Callable[[str, re.Match[str]], str]
) -> str | None:
    """``text`` with every occurrence of each match text of ``firsts`` replaced by its
    decision (see :meth:`~aw_lookahead._match_finding.MatchFinding.bulk`); None when a replacement
    holds a match text replaced after it (then each match is rewritten where it is instead)."""
    rewrites = [(text[m.start() : m.end()], decide(text, m)) for m in firsts]
    rewrites = [(old, new) for old, new in rewrites if old != new]
    for i, (_, new) in enumerate(rewrites):
        if any(later in new for later, _ in rewrites[i + 1 :]):
            return None
    for old, new in rewrites:
        text = text.replace(old, new)
    return text


def first_new(values: list[str], learned: dict[str, str], room: int, *, all_new: bool) -> list[str]:
    """The first ``room`` distinct values not in ``learned``, in order of first occurrence
    (``all_new``: ``values`` are distinct), looking at no more of ``values`` than needed."""
    size = 4 * room + 64
    while True:
        head = values[:size] if all_new else dict.fromkeys(islice(values, size))
        fresh = list(islice(filterfalse(learned.__contains__, head), room))
        if len(fresh) == room or size >= len(values):
            return fresh
        size *= 4


def starting_with(values: list[str], prefix: str) -> set[str]:
    """The values that start with ``prefix`` (a non-empty text with no NUL).

    Where they are rare among tens of thousands, a call per value (``startswith``) would
    cost more than the rest of deciding them: they are read from :func:`places_starting_with`.
    Where that gives None, each value is asked instead."""
    places = places_starting_with(values, prefix)
    if places is None:
        return set(filter(operator.methodcaller("startswith", prefix), values))
    return set(map(values.__getitem__, places))


def places_starting_with(values: list[str], prefix: str) -> list[int] | None:
    """The indexes (in order) of the values that start with ``prefix`` (a non-empty text with
    no NUL), found without a call per value: the values are joined by NULs once and
    ``prefix`` after a NUL looked for in that, each place the start of a value, whose index
    is the count of NULs before it (counted on from the place before). None when a value
    holds a NUL itself (the joined text has more than one between two values), or more
    than ``_FEW_STARTING`` values start with ``prefix``."""
    if "\0" in prefix or not prefix:
        raise ValueError("prefix must be a non-empty text without NUL")
    joined = "\0".join(values)
    mark = "\0" + prefix
    if joined.count("\0") != max(len(values) - 1, 0) or joined.count(mark) > _FEW_STARTING:
        return None
    places = [0] if values and values[0].startswith(prefix) else []
    index, counted = 0, 0
    at = joined.find(mark)
    while at >= 0:
        index += joined.count("\0", counted, at + 1)
        counted = at + 1
        places.append(index)
        at = joined.find(mark, at + 1)
    return places


def apart_from(values: list[str], prefix: str) -> tuple[list[str], set[str], list[int] | None]:
    """``values`` less those that start with ``prefix`` (a non-empty text with no NUL), those
    (each once), and their indexes in ``values`` (:func:`places_starting_with`; None where
    it gives none: then each value was asked)."""
    places = places_starting_with(values, prefix)
    if places is None:
        marks = set(filter(operator.methodcaller("startswith", prefix), values))
        return list(filterfalse(marks.__contains__, values)), marks, None
    return without_places(values, places), set(map(values.__getitem__, places)), places


def without_places(values: list[str], places: list[int]) -> list[str]:
    """``values`` less those at ``places`` (indexes, in order, distinct): slices copied."""
    kept: list[str] = []
    last = 0
    for at in places:
        kept += values[last:at]
        last = at + 1
    kept += values[last:]
    return kept


def with_places(rest: list[str], places: list[int], every: list[str]) -> list[str]:
    """The inverse of :func:`without_places`: ``rest`` with ``every[i]`` put back at each
    index ``i`` of ``places`` (in order, distinct), where
    ``rest == without_places(every, places)`` has its length."""
    done: list[str] = []
    taken = 0
    for at in places:
        step = at - len(done)
        done += rest[taken : taken + step]
        done.append(every[at])
        taken += step
    done += rest[taken:]
    return done
