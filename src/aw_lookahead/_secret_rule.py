"""One kind of secret, :class:`Rule`: its pattern, and how it is found fast in a large text.

A rule is one shape of secret (a provider's key prefix, a header, a
secret-named assignment) with cheap pre-checks (``hints``, ``word_start``,
``anchored``) that let the redactor skip or anchor the regex, since it runs
on every request and record. Every shortcut gives the matches that the
pattern alone gives (``tests/test_redact_fast_path.py``). The built-in table
of rules is :mod:`aw_lookahead._redact_rules`.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ._ascii_ends import one_byte
from ._pattern_forms import (
    _copies,
    _scannable,
    after_word,
    aligned_copies,
    aligned_lower,
    anchor_roots,
    apart,
    bare_all,
    branches_of,
    capital_matches,
    literal_starts,
    runs_of,
    starts_word,
)
from ._split_forms import ValueForm
from ._word_finder import AllPlaces

__all__ = ["Places", "Rule", "aligned_copies", "aligned_lower"]

Places = Callable[[str], tuple[int, Callable[[int], int]]]
"""Where a word first is in a text (-1: nowhere) and the next place from a start on."""
_VALUE_GROUPS = ("secret", "dq", "sq")
"""The named groups that hold the value to replace, in the order they are looked at."""
_SCAN_EVERY = 256
"""An anchored rule with more anchors than one per this many characters scans instead."""


@dataclass(frozen=True)
class Rule:
    """One kind of secret: its pattern, an optional check on the value, and its pre-checks."""

    kind: str
    regex: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    label: str = ""
    """The placeholder's word; empty means ``kind``."""
    hints: tuple[str, ...] = ()
    """Lower-case substrings one of which any match contains: a cheap test that skips the regex."""
    near: bool = False
    """The hints are words near a match, not in it; then a placeholder's words count too."""
    word_start: bool = False
    """The match must not follow an ASCII letter, digit or underscore (checked here, not in the
    regex, so the regex keeps its literal prefix and scans fast). Any other letter, an ``é`` or a
    CJK character, may come right before a token."""
    anchored: bool = False
    """Every match starts where an anchor occurs: try the regex only there (for patterns such
    as case-insensitive alternations that the regex engine cannot scan for quickly)."""
    anchors: tuple[str, ...] = ()
    """Lower-case substrings where matches start; empty means ``hints``."""
    scan: re.Pattern[str] | None = field(default=None, init=False, compare=False)
    """For an anchored ``(?i)`` rule: its pattern without ``(?i)``, run over the lower-cased
    text when that is ASCII and the anchors are many (same matches, same spans: the pattern is
    written in lower case), so the regex engine scans instead of one call per anchor."""
    lead: tuple[str, ...] = ()
    """For a ``(?i)`` pattern that starts with a group of alternative words,
    ``(?i)(?:w1|w2|…)rest``: the words, as written there (lower case)."""
    marks: tuple[str, ...] = ()
    """Lower-case substrings one of which every match holds besides a hint (the sign between
    a name and its value, ``=`` or ``:``): a text with none of them is skipped too."""
    value_form: ValueForm | None = None
    """For a pattern ending in alternative value groups, its form for a dense split (what
    follows a value, looked ahead at there, holds no letter)."""
    branches: tuple[tuple[str, re.Pattern[str]], ...] = field(default=(), init=False, compare=False)
    """From :attr:`lead`: each word's literal start with ``word + rest`` compiled, run over the
    lower-cased text; a pattern led by a literal is scanned for as fast as a substring."""
    groups: tuple[str, ...] = field(default=(), init=False, compare=False)
    """The value groups this pattern has (``secret``, ``dq``, ``sq``), first found is replaced."""
    bare: tuple[re.Pattern[str] | None, ...] = field(default=(), init=False, compare=False)
    """The pattern, :attr:`scan` and :attr:`branches` without capturing groups (same matches,
    ``findall`` gives their texts without a match object each); empty when one cannot be made."""
    roots: tuple[str, ...] = field(default=(), init=False, compare=False)
    """For an anchored rule, what is looked for to find its anchors: ASCII anchors that share
    a start of four characters or more are looked for by that start (``pass`` for
    ``password``, ``passwd``, …), one search of the text instead of one per anchor."""
    runs: tuple[bytes, int] | None = field(default=None, init=False, compare=False)
    """For a pattern that is one ASCII class repeated at least ``n`` times, possessively
    (``[A-Za-z0-9/+=]{40,}+``): a ``bytes.translate`` table marking the class, and ``n``.
    Its matches are the maximal runs of ``n`` or more, found with ``bytes.find`` instead of
    a regex attempt at every character of the class."""

    def __post_init__(self) -> None:
        source = self.regex.pattern
        if self.anchored and source.startswith("(?i)"):
            object.__setattr__(self, "scan", re.compile(source[4:]))
        if self.lead:
            object.__setattr__(self, "branches", branches_of(self.kind, source, self.lead))
        names = tuple(g for g in _VALUE_GROUPS if g in self.regex.groupindex)
        object.__setattr__(self, "groups", names)
        object.__setattr__(self, "bare", bare_all(self.regex, self.scan, self.lead))
        object.__setattr__(self, "runs", runs_of(self.regex.pattern, self.regex.flags))
        if self.anchored:
            object.__setattr__(self, "roots", anchor_roots(self.anchors or self.hints))

    @property
    def words(self) -> tuple[str, ...]:
        """The words that tell where matches may start: :attr:`roots`, the literal starts of
        :attr:`branches`, or for a rule that is not anchored, its :func:`literal_starts`."""
        if self.anchored:
            return (*self.roots, *(literal for literal, _ in self.branches))
        return literal_starts(self.regex.pattern, self.regex.flags)

    def applies(self, lower: str, ascii_only: bool) -> bool:
        """Whether ``lower`` (the lower-cased text) can hold a match at all (by its hints, then
        :attr:`marks`). Hints that are not ASCII are skipped for ASCII text (``ascii_only``),
        a test that costs far less than a search."""
        return (
            not self.hints
            or any(hint in lower for hint in self.hints if not ascii_only or hint.isascii())
        ) and (not self.marks or any(mark in lower for mark in self.marks))

    def value_span(self, match: re.Match[str]) -> tuple[int, int]:
        """Where the value to replace is in ``match``'s string: the first non-empty value group
        (the whole match when the pattern has none)."""
        for name in self.groups:
            start, end = match.span(name)
            if end > start:
                return start, end
        return match.span()

    def matches(
        self,
        text: str,
        lower: str,
        has: Callable[[str], bool] | None = None,
        narrow: Callable[[], bytes] | None = None,
        aligned: Callable[[], tuple[str, bytes] | None] | None = None,
        places: Places | None = None,
    ) -> list[re.Match[str]]:
        """This rule's matches in ``text``, in order; ``lower`` is ``text.lower()``.

        Their spans index ``text`` (a match of :attr:`scan` is one on ``lower``,
        with the same spans). Matches that fail :attr:`word_start` are left out.
        ``has`` tells whether a word is in ``lower`` (remembered across rules);
        with it, absent anchors are not looked for and :attr:`branches` are used.
        ``narrow`` gives a one-byte copy of ``lower`` (each wider character a ``?``)
        where ASCII anchors are found faster than in a wide text. ``aligned`` gives
        :func:`aligned_lower` of ``text`` and its one-byte copy, for a text whose
        lower case is longer (made here when not given).
        """
        has = has or lower.__contains__
        if self.runs is not None:
            return self._runs(text)
        if not self.anchored:
            found = list(self.regex.finditer(text))
        elif len(lower) != len(text):
            found = self._unaligned(text, has, aligned() if aligned else _copies(text))
        elif self.branches and lower.isascii():
            found = self._by_branches(lower, has)
        elif (starts := self._anchor_starts(lower, has, narrow, text, places)) is None:
            assert self.scan is not None
            found = list(self.scan.finditer(lower))
        else:
            found = self._at(text, starts)
        return self._word_starts(text, found)

    def _at(self, text: str, starts: list[int]) -> list[re.Match[str]]:
        """The matches of the regex tried at ``starts`` (in order), none inside another."""
        found: list[re.Match[str]] = []
        for at in starts:
            match = self.regex.match(text, at) if not found or at >= found[-1].end() else None
            if match is not None:
                found.append(match)
        return found

    def _unaligned(
        self, text: str, has: Callable[[str], bool], copies: tuple[str, bytes] | None
    ) -> list[re.Match[str]]:
        """The matches of an anchored rule in a text whose lower case is longer (a capital
        dotted I lower-cases to two characters): its anchors are found in ``copies``
        (:func:`aligned_lower` and its one-byte copy), the whole pattern runs only
        when there are none. ``has`` (of the true lower case) rules out anchors that
        hold no ``i``, the only letter the two lower cases tell apart."""
        if copies is not None:
            same, narrow = copies
            starts = self._anchor_starts(same, lambda w: "i" in w or has(w), lambda: narrow)
            if starts is not None:
                return self._at(text, starts)
        return list(self.regex.finditer(text))

    def _runs(self, text: str) -> list[re.Match[str]]:
        """The matches of a :attr:`runs` pattern: each maximal run of its class, from where
        ``bytes.find`` sees ``n`` of the class in a row (in a one-byte copy of ``text``, each
        wider character a ``?``, which the class does not hold)."""
        assert self.runs is not None
        table, least = self.runs
        marks = one_byte(text).translate(table)
        need = b"a" * least
        found: list[re.Match[str]] = []
        at = marks.find(need)
        while at >= 0:
            match = self.regex.match(text, at)
            assert match is not None
            found.append(match)
            at = marks.find(need, match.end())
        return self._word_starts(text, found)

    def _word_starts(self, text: str, found: list[re.Match[str]]) -> list[re.Match[str]]:
        """``found`` less the matches that fail :attr:`word_start`."""
        if not self.word_start:
            return found
        return [m for m in found if starts_word(text, m.start())]

    def bulk(
        self, text: str, lower: str, has: Callable[[str], bool]
    ) -> tuple[list[re.Match[str]], bool] | None:
        """This rule's matches in a large ``text``, or for one dense with a few repeated
        matches, one match of each distinct match text; None: use :meth:`matches`.

        ``(matches, False)``: the matches, as :meth:`matches` gives them (there were few).
        ``(representatives, True)``: one match per distinct match text, in order of first
        occurrence, and replacing every occurrence of those texts (``str.replace``) rewrites
        exactly the rule's matches. That is taken when each text occurs exactly as often as
        it is matched (in ``text`` and, for a scan of the lower-cased text, there too), none
        can overlap another or itself, none holds a bracket (so none can appear across a
        placeholder's edge), and for a :attr:`word_start` rule no occurrence follows a word
        character. Past the first matches, their texts come from ``findall`` of :attr:`bare`:
        no match object each.
        """
        if self.runs is not None:
            return self._runs(text), False
        if not self.bare:
            return None
        regex, scan, *branches = self.bare
        if self.anchored and self.branches and len(lower) == len(text) and lower.isascii():
            found, runs = [], []
            for (literal, branch), bare_branch in zip(self.branches, branches, strict=True):
                if not has(literal):
                    continue
                assert bare_branch is not None
                head = list(itertools.islice(branch.finditer(lower), _MANY))
                texts = list(map(re.Match.group, head))
                if len(set(texts)) > _FEW_REPEATED:
                    return None  # not a few repeated texts: the rest need not be read
                found += texts
                runs.append(head)
                if len(head) == _MANY:
                    found += bare_branch.findall(lower, head[-1].end())
            if len(found) < _MANY and all(len(head) < _MANY for head in runs):
                return self._word_starts(text, self._merged(runs, lower)), False
            if len(found) < _MANY:
                return None
            on, matcher = lower, self.scan
        else:
            if not self.anchored:
                if (capitals := capital_matches(self.regex, text, self._at, _MANY)) is not None:
                    return self._word_starts(text, capitals), False
                on, matcher, bare = text, self.regex, regex
            elif len(lower) != len(text):
                return None  # its anchors are found in a copy that keeps positions (matches)
            elif scan is not None and lower.isascii() and self._anchor_starts(lower, has) is None:
                on, matcher, bare = lower, self.scan, scan
            else:
                return None
            assert matcher is not None
            assert bare is not None
            head = list(itertools.islice(matcher.finditer(on), _MANY))
            if len(head) < _MANY:
                return self._word_starts(text, head), False
            texts = list(map(re.Match.group, head))
            if len(set(texts)) > _FEW_REPEATED:
                return None
            found = [*texts, *bare.findall(on, head[-1].end())]
        counts = Counter(found)
        if len(counts) > _FEW_REPEATED:
            return None
        reps: list[re.Match[str]] = []
        for whole, count in counts.items():
            at = on.find(whole)
            first = text[at : at + len(whole)]
            if on.count(whole) != count or (on is not text and text.count(first) != count):
                return None
            if "[" in first or "]" in first or (self.word_start and after_word(text, first)):
                return None
            assert matcher is not None
            match = matcher.match(on, at)
            if match is None or match.end() != at + len(whole):
                return None
            reps.append(match)
        if not apart(list(counts)):
            return None
        return sorted(reps, key=re.Match.start), True

    def sparse(self, text: str, lower: str, places: Places) -> list[re.Match[str]] | None:
        """For a rule that is not anchored (nor :attr:`runs`), in a large ``text`` whose lower
        case ``lower`` keeps its places, its matches as :meth:`matches` and :meth:`bulk` give
        them, from the regex tried where a :func:`literal_starts` text is (every match
        starts at one; ``places``: see :meth:`HintWords.places`); None without such texts,
        or where they are ``_MANY`` places or more (then a scan reads them faster)."""
        if self.anchored or self.runs is not None or len(lower) != len(text):
            return None
        starts: set[int] = set()
        for word in literal_starts(self.regex.pattern, self.regex.flags) or ("",):
            if not word:
                return None
            _, find = places(word)
            starts.update(find.places if isinstance(find, AllPlaces) else ())
            if len(starts) >= _MANY or not isinstance(find, AllPlaces):
                return None
        return self._word_starts(text, self._at(text, sorted(starts)))

    def _by_branches(self, lower: str, has: Callable[[str], bool]) -> list[re.Match[str]]:
        """What :attr:`scan` finds in ``lower``, from the branches whose word is present.

        Each branch is scanned on its own; when their matches do not overlap
        they are exactly the scan's (at any start, at most one word's text can
        be there); when they do, the scan itself decides.
        """
        return self._merged(
            [list(b.finditer(lower)) for lit, b in self.branches if has(lit)], lower
        )

    def _merged(self, runs: list[list[re.Match[str]]], lower: str) -> list[re.Match[str]]:
        """What :attr:`scan` finds in ``lower``, from the matches of each branch (``runs``)."""
        runs = [run for run in runs if run]
        if len(runs) < 2:
            return runs[0] if runs else []
        found = [m for run in runs for m in run]
        found.sort(key=re.Match.span)
        found = list(dict(zip(map(re.Match.span, found), found, strict=True)).values())
        ends = map(re.Match.end, found)
        if all(map(operator.le, ends, map(re.Match.start, found[1:]))):
            return found
        assert self.scan is not None
        return list(self.scan.finditer(lower))

    def _anchor_starts(
        self,
        lower: str,
        has: Callable[[str], bool],
        narrow: Callable[[], bytes] | None = None,
        text: str = "",
        places: Places | None = None,
    ) -> list[int] | None:
        """Where the anchors are (by their :attr:`roots`: some more places, where the regex
        fails), in order; None past one per ``_SCAN_EVERY`` characters of ASCII text when
        :attr:`scan` can take over, or of a wide ``text`` (``lower`` lower-cased character
        by character) where it can too: no character of ``_CASE_APART``, so that each one
        is taken by case-insensitive matching for its lower case alone (and ``\\s``,
        ``\\w`` say the same of both). In a wide text, anchors with at least four ASCII
        characters are looked for in ``narrow()`` (the same positions, one byte a
        character, each wider character a ``?``: more places again, never fewer). With
        ``places`` (see :meth:`HintWords.places`), each root is looked for through it."""
        ascii_only = lower.isascii()
        limit = len(lower) // _SCAN_EVERY + 32 if self.scan is not None else -1
        starts: set[int] = set()
        for hint in self.roots:
            if not has(hint):
                continue
            if places is not None:
                at, find = places(hint)
                if isinstance(find, AllPlaces):  # every place known: all at once
                    starts.update(find.places)
                    if 0 <= limit <= len(starts) and (ascii_only or _scannable(text)):
                        return None
                    continue
            elif narrow is not None and not ascii_only and _narrow_enough(hint):
                find = functools.partial(narrow().find, hint.encode("ascii", "replace"))
                at = find(0)
            else:
                find = functools.partial(lower.find, hint)
                at = find(0)
            while at >= 0:
                starts.add(at)
                if len(starts) == limit and (ascii_only or _scannable(text)):
                    return None
                at = find(at + 1)
        return sorted(starts)


def _narrow_enough(word: str) -> bool:
    """Whether ``word`` is looked for in the one-byte copy of a wide text: it has four ASCII
    characters or more (fewer would stand for too many places) and no ``?`` of its own."""
    return "?" not in word and sum(map(str.isascii, word)) >= 4


_FEW_REPEATED = 16
"""The most distinct match texts :meth:`Rule.bulk` replaces by ``str.replace``."""
_MANY = 256
"""From this many matches on, :meth:`Rule.bulk` reads the rest as texts (``findall``)."""
