"""Secret redaction: what leaves the process or lands on disk never holds a known credential.

A :class:`Redactor` replaces each secret it recognises with a placeholder
such as ``[REDACTED_OPENAI_KEY_3f9a1c]``. The six hex digits are a keyed hash
of the secret (HMAC-SHA256 with a random per-redactor key), so within one
redactor (one process, by default) the same secret always gets the same
placeholder: a trajectory that mentions a key in turn 2 and turn 9 shows the
model one consistent stand-in, candidate prompts keep a byte-identical
history, and nobody holding the placeholder can test guesses against it.

Where it runs (on by default, through :func:`default_redactor`):

* every chat request before it is sent: world-model predictions and token
  counts (:mod:`aw_lookahead.worldmodel`), both LLM judges;
* every record before it is written: :class:`~aw_lookahead.trajectory.JsonlWriter`
  (recorder, shadow logs, ``eval run`` outputs, ``record terminal``) and the
  on-disk prediction cache. Those files are created ``0600``.

What it recognises (the full table is in ``docs/secrets.md``): PEM private
keys; provider keys and tokens by prefix (OpenAI, Anthropic, Google, AWS,
GitHub, GitLab, Slack, Stripe, Hugging Face, npm, PyPI, …); JWTs;
``Authorization``, bearer and cookie values; passwords in URLs, flags and
password options (``--password x``, ``curl -u user:pw``, ``mysql -pPW``,
``sshpass -p``, ``.netrc``); Azure keys; assignments and fields whose name says
secret, in any case style and in several languages, also JSON-escaped or
URL-encoded; base64 runs that decode to one of these. In JSON records a value
whose key names a secret is replaced whole. A secret replaced once is then
replaced wherever it appears again (see :meth:`Redactor.messages`). Every
pattern runs in linear time.
The pattern table itself lives in :mod:`aw_lookahead._redact_rules` (each
rule a :class:`~aw_lookahead._secret_rule.Rule`), how a text goes through it
in :mod:`aw_lookahead._rule_application`; this module holds the
:class:`Redactor` (its public methods, remembered texts, records) and the
process default.

Patterns are a best effort, not a guarantee: a secret with no recognisable
shape and no telling name passes through. Add your own with
:meth:`Redactor.add` (or ``extra=``), switch redaction off with
``AW_LOOKAHEAD_REDACT=off`` or ``set_default_redactor(Redactor(enabled=False))``.

We use our own small table rather than a scanner such as ``detect-secrets``:
those scan files line by line behind global plugin settings, report findings
instead of rewriting text, and their entropy detectors flag the hashes and ids
that tool outputs are full of.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, TypeVarTuple
from urllib.parse import quote, quote_plus, unquote

from ._placeholders import DISTINCT_CAP, PLACEHOLDER_PREFIX, STAND_INS_KEPT
from ._redact_rules import builtin_rules, secret_field
from ._rule_application import RuleApplication
from ._secret_rule import Rule

__all__ = [
    "DISTINCT_CAP",
    "ENV_REDACT",
    "Redactor",
    "default_redactor",
    "redact_messages",
    "redact_messages_off_loop",
    "redact_off_loop",
    "redact_record",
    "redact_text",
    "set_default_redactor",
]

ENV_REDACT = "AW_LOOKAHEAD_REDACT"
"""Set to ``off`` (or ``0``, ``false``, ``no``) to turn the default redactor off."""

_OFF_LOOP_CHARS = 32 * 1024
_T = TypeVar("_T")
_Ts = TypeVarTuple("_Ts")
_MAX_VIEW = 64 * 1024
"""Longer texts are not decoded (URL, base64) and scanned again: the size cap on that work."""
# Base64 of at least 18 bytes, standard or URL-safe; a run is read once (possessive).
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,8192}+={0,2}(?![A-Za-z0-9+/=_-])")
_BASE64_HINT = re.compile(r"[A-Za-z0-9+/_-]{24}")


class Redactor(RuleApplication):
    """Replaces recognised secrets with stable placeholders (see the module docstring).

    ``enabled=False`` makes every method return its input unchanged.
    ``builtin=False`` starts from an empty table; ``extra`` maps a kind name
    to a pattern (see :meth:`add`). ``key`` fixes the placeholder hash key
    (by default a random one, so placeholders cannot be matched across runs).

    One text (a string of a record, a message) gets keyed placeholders for at
    most :data:`DISTINCT_CAP` distinct new secrets: each costs an HMAC, and a
    text made of nothing but distinct secrets (55k in a MiB) would cost some
    300 ms. Past the cap, each further new secret is still replaced, by one
    shared placeholder without a hash (``[REDACTED_SECRET_many]``), and is not
    learned (:meth:`messages` does not replace it elsewhere), so one hostile
    value cannot flood the memory of known secrets either. ``over_cap`` counts
    those secrets, and each text that reaches the cap logs a warning. Secrets
    this redactor has already made a placeholder for keep it past the cap.
    """

    def __init__(
        self,
        *,
        enabled: bool = True,
        builtin: bool = True,
        extra: Mapping[str, str | re.Pattern[str]] | None = None,
        key: bytes | None = None,
    ) -> None:
        super().__init__(key if key is not None else secrets.token_bytes(16))
        self.enabled = enabled
        self._rules: list[Rule] = builtin_rules() if builtin else []
        # Histories repeat across candidates and steps: remember recent message texts.
        self._memo: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()
        for kind, pattern in (extra or {}).items():
            self.add(kind, pattern)

    @property
    def kinds(self) -> list[str]:
        """The kinds of secret this redactor recognises, in the order they are applied."""
        return [rule.kind for rule in self._rules]

    def add(self, kind: str, pattern: str | re.Pattern[str]) -> None:
        """Recognise ``pattern`` too; its named group ``secret`` (or the whole match) is replaced.

        Added patterns run before the built-in ones, so a specific shape wins
        over a generic assignment.
        """
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", kind):
            raise ValueError(f"kind must be a word such as 'internal_token', got {kind!r}")
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        with self._lock:
            self._rules.insert(0, Rule(kind.lower(), regex))
            self._memo.clear()

    def text(self, text: str) -> str:
        """``text`` with every recognised secret replaced; idempotent.

        A secret recognised once is replaced wherever it appears later, bare
        or in another message (see :meth:`messages`).
        """
        if not self.enabled or not text:
            return text
        return self._text(text, self._rules)

    def _text(self, text: str, rules: list[Rule]) -> str:
        text = self._by_rules(text, rules)
        if len(text) <= _MAX_VIEW:
            if "%" in text:
                self._learn_from_view(unquote(text), rules)
            if _BASE64_HINT.search(text):
                text = self._sub_base64(text, rules)
        return self._known.sub(text)

    def _learn_from_view(self, view: str, rules: list[Rule]) -> None:
        """Secrets in the URL-decoded text are learned in their encoded forms too."""
        generation = self._known.generation
        self._by_rules(view, rules)
        self._learn(
            (form, stand_in)
            for secret, stand_in in self._known.learned_since(generation)
            for form in {quote(secret, safe=""), quote_plus(secret, safe="")} - {secret}
        )

    def _sub_base64(self, text: str, rules: list[Rule]) -> str:
        """Base64 runs that decode to text holding a secret are replaced whole."""

        def replace(match: re.Match[str]) -> str:
            run = match.group(0)
            try:
                decoded = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_").decode()
            except (binascii.Error, ValueError):
                return run
            if not decoded.replace("\n", "").isprintable():
                return run
            if self._by_rules(decoded, rules) == decoded and self._known.sub(decoded) == decoded:
                return run
            stand_in = self.placeholder("base64_secret", run)
            self._learn([(run, stand_in)])
            return stand_in

        return _BASE64_RUN.sub(replace, text)

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
        done = self._text(text, self._rules)
        with self._lock:
            self._memo[text] = done
            if len(self._memo) > STAND_INS_KEPT:
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


_process: dict[str, Redactor] = {}


def default_redactor() -> Redactor:
    """The process-wide redactor: on unless ``AW_LOOKAHEAD_REDACT`` is ``off``/``0``/``false``."""
    if "default" not in _process:
        off = os.environ.get(ENV_REDACT, "").strip().lower() in ("0", "off", "false", "no")
        _process["default"] = Redactor(enabled=not off)
    return _process["default"]


def set_default_redactor(redactor: Redactor | None) -> None:
    """Replace the process-wide redactor; ``None`` goes back to the environment's default."""
    if redactor is None:
        _process.pop("default", None)
    else:
        _process["default"] = redactor


def redact_text(text: str) -> str:
    """:meth:`Redactor.text` with the default redactor."""
    return default_redactor().text(text)


def redact_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:meth:`Redactor.messages` with the default redactor."""
    return default_redactor().messages(messages)


async def redact_off_loop(size: int, fn: Callable[[*_Ts], _T], *args: *_Ts) -> _T:
    """``fn(*args)``, work that redacts about ``size`` characters, for async servers.

    Redaction is linear in the text, but a big tool argument or record still
    costs milliseconds of CPU: from 32 KiB on, ``fn`` runs in a worker thread,
    so other sessions of a proxy or server keep being served meanwhile; below
    that, the hop to a thread would cost more than it saves.
    """
    if size < _OFF_LOOP_CHARS:
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


async def redact_messages_off_loop(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """:func:`redact_messages` for async servers: a large request is redacted in a worker thread."""
    items = list(messages)
    size = sum(len(str(m.get("content") or "")) for m in items)
    return await redact_off_loop(size, redact_messages, items)


def redact_record(value: Any) -> Any:
    """:meth:`Redactor.record` with the default redactor."""
    return default_redactor().record(value)
