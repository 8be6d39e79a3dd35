"""How a :class:`~aw_lookahead._secret_rule.Rule` finds its matches fast in a large text.

:class:`MatchFinding` holds the rule's scan strategies: the regex tried only where an
anchor is, a case-insensitive pattern scanned over the lower-cased text or branch by
branch, runs of one character class found with ``bytes.find``, and for a text dense
with a few repeated secrets, one match per distinct text (:meth:`MatchFinding.bulk`).
Every strategy gives the matches that the pattern alone gives
(``tests/test_redact_fast_path.py``); what each rule derives from its pattern to take
them is in :mod:`aw_lookahead._pattern_forms`, the rule record itself in
:mod:`aw_lookahead._secret_rule`.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections import Counter
from collections.abc import Callable

from ._ascii_ends import one_byte
from ._pattern_forms import (
    _copies,
    _scannable,
    after_word,
    apart,
    capital_matches,
    literal_starts,
    starts_word,
)
from ._word_finder import AllPlaces

__all__ = ["MatchFinding", "Places"]

Places = Callable[[str], tuple[int, Callable[[int], int]]]
"""Where a word first is in a text (-1: nowhere) and the next place from a start on."""
_SCAN_EVERY = 256
"""An anchored rule with more anchors than one per this many characters scans instead."""
_FEW_REPEATED = 16
"""The most distinct match texts :meth:`MatchFinding.bulk` replaces by ``str.replace``."""
_MANY = 256
"""From this many matches on, :meth:`MatchFinding.bulk` reads the rest as texts (``findall``)."""


class MatchFinding:
    """The scan strategies of a :class:`~aw_lookahead._secret_rule.Rule` (its base class).

    They read only the rule's pattern and what it derives from it, declared here and
    documented on ``Rule``; they keep no state of their own.
    """

    regex: re.Pattern[str]
    word_start: bool
    anchored: bool
    scan: re.Pattern[str] | None
    branches: tuple[tuple[str, re.Pattern[str]], ...]
    bare: tuple[re.Pattern[str] | None, ...]
    roots: tuple[str, ...]
    runs: tuple[bytes, int] | None

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
