"""Which placeholder each secret a rule finds gets: its keyed one, or past the cap a shared one.

A secret's placeholder is keyed (an HMAC of the secret under the redactor's key,
:meth:`Placeholders.placeholder`), the same text for the same secret. One text gets keyed
placeholders for at most :data:`DISTINCT_CAP` distinct new secrets; past that, one shared
placeholder per kind (counted in ``over_cap``). :class:`Placeholders` decides this one
match at a time, for many distinct matches at once with C-level iteration, or value by
value for a rule read without match objects; it is the base of
:class:`~aw_lookahead._rule_application.RuleApplication`, which runs the rules over the
text and puts it back together.
"""

from __future__ import annotations

import hmac
import operator
import re
from itertools import repeat

from . import _bulk_redaction, _value_splice
from ._keyed_hash import KeyedSha256
from ._secret_rule import Rule
from ._value_splice import first_new

__all__ = ["DISTINCT_CAP", "PLACEHOLDER_PREFIX", "STAND_INS_KEPT", "Placeholders"]

PLACEHOLDER_PREFIX = "[REDACTED_"
"""How every placeholder starts."""
DISTINCT_CAP = 1024
"""The most distinct new secrets one text gets keyed placeholders for (see
:class:`~aw_lookahead.redact.Redactor`)."""
STAND_INS_KEPT = 4096
"""The most placeholders (and message texts, in ``Redactor``) remembered before starting over."""
_SHARED_SUFFIX = "_many]"


class Placeholders:
    """The keyed placeholders of one redactor, and the stand-in each secret found gets.

    ``key`` keys the placeholders' HMAC. ``learned`` (secret -> placeholder) and ``made``
    (the stand-ins put in) belong to the caller's one text; the placeholders made are
    remembered here across texts, up to :data:`STAND_INS_KEPT`.
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._mac: KeyedSha256 | None = None  # the keyed states, copied per secret in bulk
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
