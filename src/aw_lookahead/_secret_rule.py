"""One kind of secret, :class:`Rule`: its pattern, its pre-checks, and what it derives.

A rule is one shape of secret (a provider's key prefix, a header, a
secret-named assignment) with cheap pre-checks (``hints``, ``word_start``,
``anchored``) that let the redactor skip or anchor the regex, since it runs
on every request and record. How its matches are found fast in a large text
(its scan strategies) is its base class, :class:`~aw_lookahead._match_finding.MatchFinding`;
every shortcut gives the matches that the pattern alone gives
(``tests/test_redact_fast_path.py``). The built-in table of rules is
:mod:`aw_lookahead._redact_rules`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ._match_finding import MatchFinding
from ._pattern_forms import (
    aligned_copies,
    aligned_lower,
    anchor_roots,
    bare_all,
    branches_of,
    literal_starts,
    runs_of,
)
from ._split_forms import ValueForm

__all__ = ["Rule", "aligned_copies", "aligned_lower"]

_VALUE_GROUPS = ("secret", "dq", "sq")
"""The named groups that hold the value to replace, in the order they are looked at."""


@dataclass(frozen=True)
class Rule(MatchFinding):
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
