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

What it recognises: PEM private keys; OpenAI, Anthropic and Google API keys;
AWS access key ids and 40-character secret keys (in text that mentions AWS
or a secret); GitHub, GitLab and Slack
tokens (and Slack webhook URLs); JWTs; ``Authorization:`` headers and bearer
tokens; passwords in URLs (``scheme://user:pass@host``); command-line flags
such as ``--password x`` and ``curl -u user:pass``; assignments and fields whose name says secret
(``*_KEY=``, ``*_TOKEN=``, ``*_SECRET=``, ``PASSWORD=``, ``"password": "..."``).
In JSON records a value whose key names a secret is replaced whole.
The pattern table itself lives in :mod:`aw_lookahead._redact_rules`; this
module holds the :class:`Redactor` that applies it and the process default.

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

import functools
import hashlib
import hmac
import os
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from ._redact_rules import SECRET_FIELD, Rule, builtin_rules

__all__ = [
    "ENV_REDACT",
    "Redactor",
    "default_redactor",
    "redact_messages",
    "redact_record",
    "redact_text",
    "set_default_redactor",
]

ENV_REDACT = "AW_LOOKAHEAD_REDACT"
"""Set to ``off`` (or ``0``, ``false``, ``no``) to turn the default redactor off."""

_PLACEHOLDER_PREFIX = "[REDACTED_"
_WORD_CHAR = re.compile(r"\w")
_MEMO_SIZE = 4096


class Redactor:
    """Replaces recognised secrets with stable placeholders (see the module docstring).

    ``enabled=False`` makes every method return its input unchanged.
    ``builtin=False`` starts from an empty table; ``extra`` maps a kind name
    to a pattern (see :meth:`add`). ``key`` fixes the placeholder hash key
    (by default a random one, so placeholders cannot be matched across runs).
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

    def placeholder(self, kind: str, secret: str) -> str:
        """The stand-in for ``secret``: the same input always gives the same text."""
        digest = hmac.new(self._key, secret.encode("utf-8", "surrogatepass"), hashlib.sha256)
        return f"{_PLACEHOLDER_PREFIX}{kind.upper()}_{digest.hexdigest()[:6]}]"

    def text(self, text: str) -> str:
        """``text`` with every recognised secret replaced; idempotent."""
        if not self.enabled or not text:
            return text
        return self._text(text, self._rules)

    def _active(self, lower: str, rules: list[Rule]) -> list[Rule]:
        return [r for r in rules if r.hint_re is None or r.hint_re.search(lower)]

    def _text(self, text: str, rules: list[Rule]) -> str:
        lower = text.lower()
        for rule in self._active(lower, rules):
            if rule.anchored and len(lower) == len(text):
                new = self._sub_at_hints(rule, text, lower)
            else:
                new = rule.regex.sub(functools.partial(self._replace, rule), text)
            if new != text:
                text, lower = new, new.lower()
        return text

    def _memo_text(self, text: str) -> str:
        with self._lock:
            done = self._memo.get(text)
            if done is not None:
                self._memo.move_to_end(text)
                return done
        done = self._text(text, self._rules)
        with self._lock:
            self._memo[text] = done
            if len(self._memo) > _MEMO_SIZE:
                self._memo.popitem(last=False)
        return done

    def _sub_at_hints(self, rule: Rule, text: str, lower: str) -> str:
        starts: set[int] = set()
        for hint in rule.hints:
            at = lower.find(hint)
            while at >= 0:
                starts.add(at)
                at = lower.find(hint, at + 1)
        parts: list[str] = []
        done = 0
        for at in sorted(starts):
            match = rule.regex.match(text, at) if at >= done else None
            if match is not None:
                parts += [text[done:at], self._replace(rule, match)]
                done = match.end()
        return "".join([*parts, text[done:]]) if parts else text

    def _replace(self, rule: Rule, match: re.Match[str]) -> str:
        group = next(
            (g for g in ("secret", "dq", "sq") if g in match.re.groupindex and match.group(g)),
            None,
        )
        value = match.group(group) if group else match.group(0)
        at = match.start()
        if (
            value.startswith(_PLACEHOLDER_PREFIX)
            or (rule.accept is not None and not rule.accept(value))
            or (rule.word_start and at > 0 and _WORD_CHAR.match(match.string, at - 1))
        ):
            return match.group(0)
        if group is None:
            return self.placeholder(rule.label or rule.kind, value)
        start, end = match.span(group)
        offset = match.start()
        whole = match.group(0)
        return (
            whole[: start - offset]
            + self.placeholder(rule.label or rule.kind, value)
            + whole[end - offset :]
        )

    def messages(self, messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Chat messages with their text content redacted (other fields kept)."""
        copies = [dict(m) for m in messages]
        if not self.enabled:
            return copies
        for copy in copies:
            content = copy.get("content")
            if isinstance(content, str):
                copy["content"] = self._memo_text(content)
            elif isinstance(content, list):
                copy["content"] = self.record(content)
        return copies

    def record(self, value: Any) -> Any:
        """A JSON-like value, redacted: strings by pattern, values of secret-named keys whole."""
        if not self.enabled:
            return value
        return self._walk(value, None)

    def _walk(self, value: Any, field: str | None) -> Any:
        if isinstance(value, str):
            redacted = self.text(value)
            if redacted != value or field is None or not SECRET_FIELD.match(field):
                return redacted
            return (
                value
                if value.startswith(_PLACEHOLDER_PREFIX)
                else self.placeholder("secret", value)
            )
        if isinstance(value, Mapping):
            return {k: self._walk(v, k if isinstance(k, str) else None) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._walk(v, None) for v in value]
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


def redact_record(value: Any) -> Any:
    """:meth:`Redactor.record` with the default redactor."""
    return default_redactor().record(value)
