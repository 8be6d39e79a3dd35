"""How a :class:`~aw_lookahead.redact.Redactor` applies its rule table to one text.

The rules run in order over the text; each distinct secret a rule finds is
decided once (its keyed placeholder, an HMAC of the secret, or past
:data:`~aw_lookahead._placeholders.DISTINCT_CAP` distinct new secrets one shared
placeholder: :mod:`aw_lookahead._placeholders`), many at once with C-level
iteration, and the text is put back together in bulk
(:mod:`aw_lookahead._bulk_redaction`); a rule dense with distinct secrets is
read and rewritten value by value, without a pass over its match texts, and
a dense word-led rule with one ``split`` (:mod:`aw_lookahead._value_splice`).
:class:`RuleApplication` is the part of ``Redactor`` that does this: the rule
loop, which way each rule reads its matches and how the text is joined again;
the public methods, the memory of message texts and the walk over records are
in :mod:`aw_lookahead.redact`.
"""

from __future__ import annotations

import functools
import logging
import operator
import re
from collections.abc import Iterable

from . import _bulk_redaction
from ._ascii_ends import lowered
from ._bulk_redaction import (
    BULK_CHARS,
    HintWords,
    collector_paused,
    splice_lowered,
)
from ._dense_split import split_values
from ._hint_words import FEW_EDITS
from ._placeholders import DISTINCT_CAP, PLACEHOLDER_PREFIX, Placeholders
from ._secret_rule import Rule, aligned_copies
from ._seen_secrets import KnownSecrets
from ._value_splice import rewrite_all, splice_values, values_of

__all__ = ["RuleApplication"]

_PROBE = 512
"""The first matches looked at to tell whether many are distinct."""
_IS_PLACEHOLDER = operator.methodcaller("startswith", PLACEHOLDER_PREFIX)
_SPLICE_ASCII = 1024
"""Up to this many matches in a large ASCII text, its new lower case is spliced."""
_log = logging.getLogger("aw_lookahead")


class RuleApplication(Placeholders):
    """Rules applied to one text, with keyed placeholders (the base of ``Redactor``).

    ``key`` keys the placeholders' HMAC (:class:`~aw_lookahead._placeholders.Placeholders`
    decides each stand-in). What a subclass must keep up: the secrets learned go through
    :meth:`_learn` (a subclass that remembers redacted texts forgets them there).
    """

    def __init__(self, key: bytes) -> None:
        super().__init__(key)
        self._known = KnownSecrets(PLACEHOLDER_PREFIX)

    def _by_rules(self, text: str, rules: list[Rule]) -> str:
        """``text`` through every rule; the secrets found are learned at the end, at once.

        For a large text the cyclic garbage collector is paused meanwhile: a rule dense
        with matches makes tens of thousands of match objects, all freed by reference
        counting, that would set off collections finding nothing (a fifth of the time
        of 1 MiB of distinct secrets).
        """
        if len(text) < BULK_CHARS:
            return self._through_rules(text, rules)
        with collector_paused():
            return self._through_rules(text, rules)

    def _through_rules(self, text: str, rules: list[Rule]) -> str:
        lower = lowered(text)
        ascii_only = lower.isascii()
        hints = self._hint_words(lower, ascii_only, rules)
        # Lower-casing is then per character, and the new lower case can be spliced too.
        per_char = ascii_only or (len(lower) == len(text) and "\u03a3" not in text)
        learned: dict[str, str] = {}
        over_cap, size = self.over_cap, len(text)
        aligned = aligned_copies(text) if len(lower) != len(text) else None
        last = rules[-1] if rules else None  # after it, no lower case is needed
        for rule in rules:
            if hints is not None and not hints.any(rule.hints, near=rule.near):
                continue
            if hints is not None and not hints.any(rule.marks, near=True):
                continue
            if hints is None and not rule.applies(lower, ascii_only):
                continue
            if hints is not None and rule.words:
                hints.learn_places(rule.words)
            made: set[str] = set()
            edits: list[tuple[int, int, int]] | None = None
            decide = functools.partial(self._stand_in, rule, learned, made)
            decide_all = functools.partial(self._stand_in_all, rule, learned, made)
            has = hints.outside if hints is not None else None  # no match starts in a placeholder
            known = hints is not None and hints.knows(rule.words)  # no search per word
            sparse = rule.sparse(text, lower, hints.places) if hints and known else None
            bulk = rule.bulk(text, lower, hints.outside) if hints and sparse is None else None
            bulk = (sparse, False) if sparse is not None else bulk
            new_lower: str | None = None
            new_narrow: bytes | None = None
            new = rewrite_all(text, bulk[0], decide) if bulk is not None and bulk[1] else None
            if new is None and bulk is None and hints is not None:
                new = self._by_split(rule, learned, made, text, lower, hints)
            if new is None:
                few = bulk is not None and not bulk[1]
                if bulk is not None and few:
                    matches = bulk[0]
                else:
                    narrow = hints.narrow if hints is not None else None
                    places = hints.places if hints is not None else None
                    matches = rule.matches(text, lower, has, narrow, aligned, places)
                # ASCII text is lower-cased again faster than it is spliced around many matches.
                few = len(matches) <= _SPLICE_ASCII or not ascii_only
                more = rule is not last
                on = lower if per_char and few and more and len(text) >= BULK_CHARS else None
                was = hints.narrow_made if hints is not None else None
                done = self._by_values(rule, learned, made, text, matches, on, was)
                if done is None:
                    edits = [] if aligned is None and len(matches) <= FEW_EDITS else None
                    done = splice_lowered(text, on, matches, decide, decide_all, was, edits)
                new, new_lower, new_narrow = done
            if new == text:
                continue
            text = new
            if rule is last:
                break
            lower = new_lower if new_lower is not None else lowered(new)
            if len(lower) != len(text):
                edits = None
            hints = hints.after(lower, made, new_narrow, edits) if hints is not None else None
            aligned = aligned_copies(text) if len(lower) != len(text) else None
        self._learn(learned.items())
        if self.over_cap != over_cap:
            _log.warning(
                "a text of %d characters held more than %d distinct new secrets: %d more were "
                "replaced with one shared placeholder and not remembered",
                size,
                DISTINCT_CAP,
                self.over_cap - over_cap,
            )
        return text

    @staticmethod
    def _hint_words(lower: str, ascii_only: bool, rules: list[Rule]) -> HintWords | None:
        """For a large text, its hint words looked up once each; None for a small one."""
        if len(lower) < BULK_CHARS:
            return None
        vocabulary = frozenset(h for rule in rules for h in rule.hints)
        hints = HintWords(lower, ascii_only, vocabulary)
        hints.learn_places({w for rule in rules for w in (*rule.hints, *rule.words)})
        return hints

    def _by_values(
        self,
        rule: Rule,
        learned: dict[str, str],
        made: set[str],
        text: str,
        matches: list[re.Match[str]],
        lower: str | None,
        narrow: bytes | None,
    ) -> tuple[str, str | None, bytes | None] | None:
        """What :func:`splice_lowered` gives with :meth:`_stand_in_all` deciding, for many
        matches, decided per value (:meth:`_decide_values`); None where that may differ."""
        least = _bulk_redaction._DECIDE_ALL
        if len(matches) < least or rule.accept is not None:
            return None
        if len(set(map(re.Match.group, matches[:_PROBE]))) < least:
            return None  # few distinct matches (and values): not worth reading every value
        values, starts, stops = values_of(rule, text, matches)
        stand_ins = self._decide_values(rule, learned, made, text, values)
        if stand_ins is None:
            return None
        return splice_values(text, lower, narrow, starts, stops, stand_ins, made)

    def _by_split(
        self,
        rule: Rule,
        learned: dict[str, str],
        made: set[str],
        text: str,
        lower: str,
        hints: HintWords,
    ) -> str | None:
        """``text`` through a rule dense with matches, read by :func:`split_values` (no match
        object each) and decided per value; None when not read or decided that way.
        ``hints`` tell whether a word is in the text outside placeholders (no match starts
        inside one) and, when known, where it last is; where every value is a placeholder,
        the text is kept as it is."""
        if rule.accept is not None:
            return None
        has, last = hints.outside, hints.last_place
        split = split_values(rule, text, lower, has, kept=PLACEHOLDER_PREFIX, last=last)
        if split is None:
            return None
        gaps, heads, values, tails = split
        if PLACEHOLDER_PREFIX in text and all(map(_IS_PLACEHOLDER, values)):
            return text  # each match kept as it is (:meth:`_stand_in`)
        stand_ins = self._decide_values(rule, learned, made, text, values)
        if stand_ins is None:
            return None
        fixed = isinstance(tails, str)
        step = len(heads) + (2 if fixed and not tails else 3)
        pieces: list[str] = [tails if isinstance(tails, str) else ""] * (step * len(values) + 1)
        pieces[0::step] = gaps
        for at, head in enumerate(heads, 1):
            pieces[at::step] = head
        at = len(heads) + 1
        pieces[at::step] = stand_ins
        if not isinstance(tails, str):
            pieces[at + 1 :: step] = tails
        return "".join(pieces)

    def _learn(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remember ``pairs`` (secret, placeholder) as known secrets."""
        self._known.learn(pairs)
