"""The :class:`Redactor`: a rule table, keyed placeholders, known secrets, decoded views, records.

What it recognises and where it runs is told in :mod:`aw_lookahead.redact`;
the table is :mod:`aw_lookahead.redact.rules`, the memory of secrets
:mod:`aw_lookahead.redact.known`.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import logging
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote

from .known import KnownSecrets
from .rules import RedactionRule, builtin_rules, secret_field

__all__ = ["DISTINCT_CAP", "PLACEHOLDER_PREFIX", "Redactor"]

PLACEHOLDER_PREFIX = "[REDACTED_"
"""How every placeholder starts."""
DISTINCT_CAP = 1024
"""The most distinct new secrets one text gets keyed placeholders for (see :class:`Redactor`)."""
_KEPT = 4096
"""The most placeholders, and message texts, remembered before starting over."""
_MAX_VIEW = 64 * 1024
"""Longer texts are not decoded (URL, base64) and scanned again: the size cap on that work."""
# Base64 of at least 18 bytes, standard or URL-safe; a run is read once (possessive).
_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_unescaped(text: str) -> str:
    """``text`` with JSON string escapes decoded (``\\n``, ``\\"``, ``\\u00e9``): one pass."""

    def one(match: re.Match[str]) -> str:
        code, char = match.groups()
        return chr(int(code, 16)) if code else _JSON_SIMPLE.get(char, char)

    return _JSON_ESCAPE.sub(one, text)


_JSON_DEPTH = 4
"""How many times a JSON string may be escaped inside another and still be read."""


def _json_forms(secret: str) -> set[str]:
    """How ``secret`` reads inside a JSON string, and inside one escaped up to
    :data:`_JSON_DEPTH` times (a JSON document carried as a string in another)."""
    forms: set[str] = set()
    level = {secret}
    for _ in range(_JSON_DEPTH):
        level = {json.dumps(f, ensure_ascii=a)[1:-1] for f in level for a in (True, False)}
        forms |= level
    return forms


def _url_forms(secret: str) -> set[str]:
    return {quote(secret, safe=""), quote_plus(secret, safe="")}


_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,8192}+={0,2}(?![A-Za-z0-9+/=_-])")
_log = logging.getLogger("aw_lookahead")


class Redactor:
    """Replaces recognised secrets with stable placeholders (see :mod:`aw_lookahead.redact`).

    ``enabled=False`` makes every method return its input unchanged.
    ``builtin=False`` starts from an empty table; ``extra`` maps a kind name
    to a pattern (see :meth:`add`). ``key`` fixes the placeholder hash key
    (by default a random one, so placeholders cannot be matched across runs).

    One text (a string of a record, a message) gets keyed placeholders for at
    most :data:`DISTINCT_CAP` distinct new secrets. Past the cap, each further
    new secret is still replaced, by one shared placeholder without a hash
    (``[REDACTED_SECRET_many]``), and is not learned (:meth:`messages` does not
    replace it elsewhere), so one hostile value cannot flood the memory of
    known secrets. ``over_cap`` counts those secrets, and each text that
    reaches the cap logs a warning. Secrets this redactor has already made a
    placeholder for keep it past the cap.
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        builtin: bool = True,
        extra: Mapping[str, str | re.Pattern[str]] | None = None,
        key: bytes | None = None,
    ) -> None:
        self.enabled = enabled
        self._key = key if key is not None else secrets.token_bytes(16)
        self._rules: list[RedactionRule] = builtin_rules() if builtin else []
        self._known = KnownSecrets(PLACEHOLDER_PREFIX)
        self._stand_ins: dict[tuple[str, str], str] = {}
        # Histories repeat across candidates and steps: remember recent message texts.
        self._memo: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        self.over_cap = 0
        """Secrets given the shared placeholder because their text reached :data:`DISTINCT_CAP`."""
        for kind, pattern in (extra or {}).items():
            self.add(kind, pattern)

    @property
    def kinds(self) -> list[str]:
        """The kinds of secret this redactor recognises, in the order they are applied."""
        return [rule.kind for rule in self._rules]

    def add(self, kind: str, pattern: str | re.Pattern[str]) -> None:
        """Recognise ``pattern`` too; its named group ``secret`` (or the whole match) is replaced.

        Added patterns run before the built-in ones, so a specific shape wins
        over a generic assignment. Write them linear (no nested repetition that
        can match the same text two ways): they run on every request and record.
        """
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", kind):
            raise ValueError(f"kind must be a word such as 'internal_token', got {kind!r}")
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        with self._lock:
            self._rules.insert(0, RedactionRule(kind.lower(), regex))
            self._memo.clear()

    def placeholder(self, kind: str, secret: str) -> str:
        """The stand-in for ``secret``: the same input always gives the same text.

        Six hex digits of HMAC-SHA256 under this redactor's key: stable within
        the redactor, and nobody holding the placeholder can test guesses.
        """
        done = self._stand_ins.get((kind, secret))
        if done is None:
            digest = hmac.digest(self._key, secret.encode("utf-8", "surrogatepass"), "sha256")
            done = f"{PLACEHOLDER_PREFIX}{kind.upper()}_{digest.hex()[:6]}]"
            if len(self._stand_ins) >= _KEPT:
                self._stand_ins.clear()
            self._stand_ins[(kind, secret)] = done
        return done

    def text(self, text: str) -> str:
        """``text`` with every recognised secret replaced; idempotent.

        A secret recognised once is replaced wherever it appears later, bare
        or in another message (see :meth:`messages`).
        """
        if not self.enabled or not text:
            return text
        return self._text(text)

    def _text(self, text: str) -> str:
        text = self._by_rules(text)
        if len(text) <= _MAX_VIEW:
            if "%" in text:
                self._learn_from_view(unquote(text), _url_forms)
            view = text
            for _ in range(_JSON_DEPTH):  # JSON strings: a secret split by their escapes
                if "\\" not in view:
                    break
                view = _json_unescaped(view)
                self._learn_from_view(view, _json_forms)
            text = _BASE64_RUN.sub(self._base64, text)
        return self._known.sub(text)

    def _by_rules(self, text: str) -> str:
        """``text`` through every rule in order; the secrets found are learned at the end."""
        learned: dict[str, str] = {}
        over: set[tuple[str, str]] = set()  # (kind, secret) given the shared placeholder
        over_cap = self.over_cap
        lower = _lowered(text)
        for rule in self._rules:
            if not rule.applies(lower):
                continue
            new = self._by_rule(rule, text, lower, learned, over)
            if new is not text:
                text, lower = new, _lowered(new)
        self._learn(learned.items())
        if self.over_cap != over_cap:
            _log.warning(
                "a text of %d characters held more than %d distinct new secrets: %d more were "
                "replaced with one shared placeholder and not remembered",
                len(text),
                DISTINCT_CAP,
                self.over_cap - over_cap,
            )
        return text

    def _by_rule(
        self,
        rule: RedactionRule,
        text: str,
        lower: str,
        learned: dict[str, str],
        over: set[tuple[str, str]],
    ) -> str:
        """``text`` with the values of ``rule``'s matches replaced (``text`` itself if none)."""
        if rule.lowered is not None and len(lower) == len(text):
            matches = rule.lowered.finditer(lower)
        else:  # not folded, or lower-casing moved characters: the case-insensitive pattern
            matches = rule.regex.finditer(text)
        pieces: list[str] = []
        done = 0
        for match in matches:
            for start, stop in rule.value_spans(match):
                stand_in = self._stand_in(rule, text[start:stop], learned, over)
                if stand_in is not None and start >= done:
                    pieces += (text[done:start], stand_in)
                    done = stop
        if not pieces:
            return text
        pieces.append(text[done:])
        return "".join(pieces)

    def _stand_in(
        self, rule: RedactionRule, value: str, learned: dict[str, str], over: set[tuple[str, str]]
    ) -> str | None:
        """What replaces ``value`` found by ``rule``; None to leave it (a placeholder already,
        or refused by the rule's check). ``learned`` and ``over`` are the text's secrets so
        far, with a keyed placeholder and past :data:`DISTINCT_CAP`."""
        if value.startswith(PLACEHOLDER_PREFIX) or (rule.accept and not rule.accept(value)):
            return None
        kind = rule.label or rule.kind
        if len(learned) >= DISTINCT_CAP and value not in learned:
            done = self._stand_ins.get((kind, value))
            if done is not None:
                return done
            if (kind, value) not in over:
                over.add((kind, value))
                self.over_cap += 1
            return f"{PLACEHOLDER_PREFIX}{kind.upper()}_many]"
        stand_in = self.placeholder(kind, value)
        learned.setdefault(value, stand_in)
        return stand_in

    def _learn_from_view(self, view: str, forms: Callable[[str], set[str]]) -> None:
        """Secrets in a decoded view of the text (URL, JSON string) are learned in their
        encoded ``forms`` too, so the text itself loses them wherever they stand."""
        generation = self._known.generation
        self._by_rules(view)
        self._learn(
            (form, stand_in)
            for secret, stand_in in self._known.learned_since(generation)
            for form in forms(secret) - {secret}
        )

    def _base64(self, match: re.Match[str]) -> str:
        """A base64 run that decodes to text holding a secret, replaced whole."""
        run = match.group(0)
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_").decode()
        except (binascii.Error, ValueError):
            return run
        if not decoded.replace("\n", "").isprintable():
            return run
        if self._by_rules(decoded) == decoded and self._known.sub(decoded) == decoded:
            return run
        stand_in = self.placeholder("base64_secret", run)
        self._learn([(run, stand_in)])
        return stand_in

    def _learn(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remember ``pairs`` as known secrets; remembered texts are forgotten when any was new."""
        if self._known.learn(pairs):
            with self._lock:
                self._memo.clear()  # remembered texts may hold the secrets

    def _memo_text(self, text: str) -> str:
        with self._lock:
            done = self._memo.get(text)
            if done is not None:
                self._memo.move_to_end(text)
                return done
        done = self._text(text)
        with self._lock:
            self._memo[text] = done
            if len(self._memo) > _KEPT:
                self._memo.popitem(last=False)
        return done

    def messages(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Chat messages with their text content redacted (other fields kept).

        A secret first recognised in a later message is also replaced in the
        earlier ones (a key printed bare in turn 2 and named in turn 5).
        """
        copies = [dict(m) for m in messages]
        if not self.enabled:
            return copies
        generation = self._known.generation
        for copy in copies:
            content = copy.get("content")
            if isinstance(content, str):
                copy["content"] = self._memo_text(content)
            elif isinstance(content, list):
                copy["content"] = self.record(content)
        if self._known.generation != generation:
            for copy in copies:
                if "content" in copy:
                    copy["content"] = self._walk(copy["content"], None, self._known.sub)
        return copies

    def record(self, value: Any) -> Any:
        """A JSON-like value, redacted: strings by pattern, values of secret-named keys whole.

        As in :meth:`messages`, a secret found anywhere in the value is
        replaced everywhere in it.
        """
        if not self.enabled:
            return value
        generation = self._known.generation
        done = self._walk(value, None, self.text)
        if self._known.generation != generation:
            done = self._walk(done, None, self._known.sub)
        return done

    def _walk(self, value: Any, field: str | None, text: Callable[[str], str]) -> Any:
        if isinstance(value, str):
            redacted = text(value)
            if redacted != value or field is None or not secret_field(field):
                return redacted
            if value.startswith(PLACEHOLDER_PREFIX):
                return value
            stand_in = self.placeholder("secret", value)
            self._learn([(value, stand_in)])
            return stand_in
        if isinstance(value, Mapping):
            return {
                k: self._walk(v, k if isinstance(k, str) else None, text) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._walk(v, None, text) for v in value]
        return value


def _lowered(text: str) -> str:
    """``text`` lower-cased character for character where it can be: a capital dotted I,
    which lower-cases to two characters, as ``i`` (what case-insensitive matching takes it
    for). Folded rules run over it only where it is as long as ``text``."""
    lower = text.lower()
    if len(lower) != len(text):
        lower = text.replace("\u0130", "i").lower()
    return lower
