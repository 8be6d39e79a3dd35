"""How a :class:`~aw_lookahead.redact.Redactor` applies its rule table to one text.

The rules run in order over the text; each distinct secret a rule finds is
decided once (its keyed placeholder, an HMAC of the secret), many at once
with C-level iteration, and the text is put back together in bulk
(:mod:`aw_lookahead._bulk_redaction`); a rule dense with distinct secrets is
read and rewritten value by value, without a pass over its match texts, and
a dense word-led rule with one ``split`` (:mod:`aw_lookahead._value_splice`).
One text gets keyed placeholders for at most :data:`DISTINCT_CAP` distinct new
secrets; past that, one shared placeholder. :class:`RuleApplication` is the
part of ``Redactor`` that does this; the public methods, the memory of message
texts and the walk over records are in :mod:`aw_lookahead.redact`.
"""

from __future__ import annotations

import functools
import hmac
import logging
import operator
import re
from collections.abc import Iterable
from itertools import repeat

from . import _bulk_redaction, _value_splice
from ._ascii_ends import lowered
from ._bulk_redaction import (
    BULK_CHARS,
    HintWords,
    collector_paused,
    splice_lowered,
)
from ._dense_split import split_values
from ._hint_words import FEW_EDITS
from ._keyed_hash import KeyedSha256
from ._secret_rule import Rule, aligned_copies
from ._seen_secrets import KnownSecrets
from ._value_splice import first_new, rewrite_all, splice_values, values_of

__all__ = ["DISTINCT_CAP", "PLACEHOLDER_PREFIX", "STAND_INS_KEPT", "RuleApplication"]

PLACEHOLDER_PREFIX = "[REDACTED_"
"""How every placeholder starts."""
DISTINCT_CAP = 1024
"""The most distinct new secrets one text gets keyed placeholders for (see
:class:`~aw_lookahead.redact.Redactor`)."""
STAND_INS_KEPT = 4096
"""The most placeholders (and message texts, in ``Redactor``) remembered before starting over."""
_SHARED_SUFFIX = "_many]"
_PROBE = 512
"""The first matches looked at to tell whether many are distinct."""
_IS_PLACEHOLDER = operator.methodcaller("startswith", PLACEHOLDER_PREFIX)
_SPLICE_ASCII = 1024
"""Up to this many matches in a large ASCII text, its new lower case is spliced."""
_log = logging.getLogger("aw_lookahead")


class RuleApplication:
    """Rules applied to one text, with keyed placeholders (the base of ``Redactor``).

    ``key`` keys the placeholders' HMAC. What a subclass must keep up: the
    secrets learned go through :meth:`_learn` (a subclass that remembers
    redacted texts forgets them there).
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._mac: KeyedSha256 | None = None  # the keyed states, copied per secret in bulk
        self._known = KnownSecrets(PLACEHOLDER_PREFIX)
        self._stand_ins: dict[tuple[str, str], str] = {}
        self.over_cap = 0
        """Secrets given the shared placeholder because their text reached :data:`DISTINCT_CAP`."""

    def placeholder(self, kind: str, secret: str) -> str:
        """The stand-in for ``secret``: the same input always gives the same text."""
        done = self._stand_ins.get((kind, secret))
        if done is None:
            digest = hmac.digest(self._key, secret.encode("utf-8", "surrogatepass"), "sha256")
            done = f"{PLACEHOLDER_PREFIX}{kind.upper()}_{digest.hex()[:6]}]"
            if len(self._stand_ins) >= STAND_INS_KEPT:
                self._stand_ins.clear()
            self._stand_ins[(kind, secret)] = done
        return done

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

    def _stand_in(
        self, rule: Rule, learned: dict[str, str], made: set[str], text: str, m: re.Match[str]
    ) -> str:
        """What replaces match ``m`` of ``rule``: its value as a placeholder, or ``m`` unchanged
        when the value is not taken. The secret goes to ``learned``, the placeholder to ``made``."""
        at, end = m.span()
        start, stop = rule.value_span(m)
        value = text[start:stop]
        if value.startswith(PLACEHOLDER_PREFIX) or (rule.accept and not rule.accept(value)):
            return text[at:end]
        kind = rule.label or rule.kind
        if len(learned) >= DISTINCT_CAP and value not in learned:
            stand_in = self._over_cap(kind, value)
        else:
            stand_in = self.placeholder(kind, value)
            learned.setdefault(value, stand_in)
        made.add(stand_in)
        return text[at:start] + stand_in + text[stop:end]

    def _over_cap(self, kind: str, value: str) -> str:
        """The stand-in for a secret past :data:`DISTINCT_CAP`: its placeholder when one was
        made before, else the shared one (counted in ``over_cap``)."""
        done = self._stand_ins.get((kind, value))
        if done is not None:
            return done
        self.over_cap += 1
        return f"{PLACEHOLDER_PREFIX}{kind.upper()}{_SHARED_SUFFIX}"

    def _stand_in_all(
        self,
        rule: Rule,
        learned: dict[str, str],
        made: set[str],
        text: str,
        matches: list[re.Match[str]],
    ) -> list[str]:
        """:meth:`_stand_in` of each of ``matches`` (distinct), for many at once: the
        placeholders are made with C-level iteration instead of one Python call each."""
        spans = list(map(rule.value_span, matches))
        starts = list(map(operator.itemgetter(0), spans))
        stops = list(map(operator.itemgetter(1), spans))
        values = list(map(text.__getitem__, map(slice, starts, stops)))
        prefixed = map(str.startswith, values, repeat(PLACEHOLDER_PREFIX))
        if rule.accept is not None or any(prefixed):
            return [self._stand_in(rule, learned, made, text, m) for m in matches]
        kind = rule.label or rule.kind
        if len(learned) + len(values) > DISTINCT_CAP:
            stand_ins = self._capped(kind, learned, values)
        else:
            stand_ins = self._keyed(kind, values)
            for value, stand_in in zip(values, stand_ins, strict=True):
                learned.setdefault(value, stand_in)
        made.update(stand_ins)
        before = map(text.__getitem__, map(slice, map(re.Match.start, matches), starts))
        after = map(text.__getitem__, map(slice, stops, map(re.Match.end, matches)))
        return list(map(operator.add, map(operator.add, before, stand_ins), after))

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

    def _decide_values(
        self, rule: Rule, learned: dict[str, str], made: set[str], text: str, values: list[str]
    ) -> list[str] | None:
        """The stand-in of each of ``values`` (one per match of ``rule``, in order) as
        :meth:`_stand_in_all` gives it to the distinct matches holding them: its keyed
        placeholder, learned, for the first new ones up to the cap, then the placeholder it
        had before or the shared one. ``made`` gets each stand-in.

        None (decide match by match) where that could differ from what ``splice_lowered``
        does: fewer than ``_DECIDE_ALL`` distinct values (it would decide match by match,
        remembering placeholders), a value check, or a value this text already gave a
        placeholder of another kind.

        A value that is a placeholder keeps its match as it is (its stand-in is itself) and
        decides nothing, as in :meth:`_stand_in`. Among such values, ``splice_lowered``
        decides match by match (:meth:`_stand_in`), which also remembers each keyed
        placeholder (:meth:`placeholder`) and counts each distinct match past the cap: the
        same here where the other values are distinct (one match each) and remembering them
        cannot fill the memory of placeholders (it would start over meanwhile); else None.
        """
        every, kept_as_is, places, marks = values, dict[str, str](), None, set[str]()
        if PLACEHOLDER_PREFIX in text:
            values, marks, places = _value_splice.apart_from(values, PLACEHOLDER_PREFIX)
        if marks:
            kept_as_is = dict(zip(marks, marks, strict=True))
        seen = set(values)
        if len(seen) < _bulk_redaction._DECIDE_ALL:
            return None
        if kept_as_is and len(seen) != len(values):
            return None
        kind = rule.label or rule.kind
        again = [v for v in learned if v in seen]
        if again and self._keyed(kind, again) != list(map(learned.__getitem__, again)):
            return None
        room = max(DISTINCT_CAP - len(learned), 0)
        kept = first_new(values, learned, room, all_new=len(seen) == len(values))
        if kept_as_is and len(self._stand_ins) + len(again) + len(kept) >= STAND_INS_KEPT:
            return None
        keyed = self._keyed(kind, kept)
        if kept_as_is:
            remembered = zip(repeat(kind), [*again, *kept])
            stand_ins = [*map(learned.__getitem__, again), *keyed]
            self._stand_ins.update(zip(remembered, stand_ins, strict=True))  # as placeholder()
        learned.update(zip(kept, keyed, strict=True))
        made.update(keyed, map(learned.__getitem__, again))
        decided = learned
        shared = f"{PLACEHOLDER_PREFIX}{kind.upper()}{_SHARED_SUFFIX}"
        over = len(seen) - len(again) - len(kept)
        if over:
            kept_before = dict(self._stand_ins)  # one C call: other threads may add meanwhile
            before = {
                v: s
                for (k, v), s in kept_before.items()
                if k == kind and v in seen and v not in learned
            }
            self.over_cap += over - len(before)
            if before:
                decided = {**learned, **before}
                made.update(before.values())
            if over > len(before):
                made.add(shared)
        if (
            decided is learned
            and not again
            and len(seen) == len(values)
            and (places is not None or len(values) == len(every))
            and kept == values[: len(kept)]
        ):  # each value once, none decided before, the first ones new: the rest shared
            rest = [*keyed, *repeat(shared, len(values) - len(kept))]
            return (
                _value_splice.with_places(rest, places, every) if places else rest
            )  # marks as they are
        if kept_as_is:
            decided = {**decided, **kept_as_is}
        return list(map(decided.get, every, repeat(shared)))

    def _keyed(self, kind: str, values: list[str]) -> list[str]:
        """The keyed placeholder of each of ``values`` (what :meth:`placeholder` gives)."""
        encoded = map(operator.methodcaller("encode", "utf-8", "surrogatepass"), values)
        if self._mac is None:
            self._mac = KeyedSha256(self._key)
        digests = self._mac.digests(encoded)
        template = f"{PLACEHOLDER_PREFIX}{kind.upper()}_{{}}]"
        short = map(bytes.hex, map(operator.itemgetter(slice(0, 3)), digests))
        return list(map(template.format, short))

    def _capped(self, kind: str, learned: dict[str, str], values: list[str]) -> list[str]:
        """The stand-in of each of ``values`` when they take the text past :data:`DISTINCT_CAP`:
        keyed placeholders (learned) for the first new ones up to the cap, as
        :meth:`_stand_in` would give them one by one, the shared one for the rest."""
        fresh = [v for v in dict.fromkeys(values) if v not in learned]
        room = max(DISTINCT_CAP - len(learned), 0)
        kept, rest = fresh[:room], fresh[room:]
        decided = dict(learned)
        for value, stand_in in zip(kept, self._keyed(kind, kept), strict=True):
            learned[value] = decided[value] = stand_in
        shared = f"{PLACEHOLDER_PREFIX}{kind.upper()}{_SHARED_SUFFIX}"
        over = list(map(self._stand_ins.get, zip(repeat(kind), rest), repeat(shared)))
        self.over_cap += over.count(shared)
        decided.update(zip(rest, over, strict=True))
        return list(map(decided.__getitem__, values))

    def _learn(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remember ``pairs`` (secret, placeholder) as known secrets."""
        self._known.learn(pairs)
