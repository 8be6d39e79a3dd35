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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

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

# Names that say "this value is a secret", shared by text assignments and JSON keys.
_SECRET_WORDS = (
    r"password|passwd|passphrase|secret|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
)
_SECRET_FIELD = re.compile(
    rf"(?i:^(?:.*[_.-])?(?:{_SECRET_WORDS}|pwd|authorization|cookie)$)|^[A-Z0-9_]*_KEY$"
)
_SECRET_HINTS = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "api_key",
    "api-key", "accesskey", "access_key", "access-key", "privatekey", "private_key",
    "private-key", "authkey", "auth_key", "auth-key",
)  # fmt: skip
# A bare value (stops at quotes, separators, JSON escapes), or a quoted one.
_VALUE = (
    r"(?:\"(?P<dq>[^\"\\\n]{1,256})\"|'(?P<sq>[^'\\\n]{1,256})'"
    r"|\\?[\"']?(?!(?:null|true|false|None)\b)(?P<secret>[^\s\"'\\,;&}\]\)>]{3,}))"
)


@dataclass(frozen=True)
class _Rule:
    kind: str
    regex: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    label: str = ""
    """The placeholder's word; empty means ``kind``."""
    hints: tuple[str, ...] = ()
    """Lower-case substrings one of which any match contains: a cheap test that skips the regex."""
    word_start: bool = False
    """The match must not follow a letter, digit or underscore (checked here, not in the regex,
    so the regex keeps its literal prefix and scans fast)."""
    anchored: bool = False
    """Every match starts where a hint occurs: try the regex only there (for patterns such as
    case-insensitive alternations that the regex engine cannot scan for quickly)."""
    hint_re: re.Pattern[str] | None = field(default=None, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.hints:
            joined = "|".join(re.escape(h) for h in self.hints)
            object.__setattr__(self, "hint_re", re.compile(joined))


def _mixed(value: str) -> bool:
    """A 40-character AWS secret: upper, lower and a digit, and not a hex digest."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and not re.fullmatch(r"[0-9a-fA-F]+", value)
    )


_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")
_GITLAB_PREFIXES = ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-")
_GITHUB_PREFIXES = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")


def _builtin_rules() -> list[_Rule]:
    r = re.compile
    return [
        _Rule(
            "private_key",
            r(
                r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"|(?:[A-Za-z0-9+/=\s]|\\[nr])*)",
                re.DOTALL,
            ),
            hints=("private key",),
        ),
        _Rule(
            "anthropic_key", r(r"sk-ant-[A-Za-z0-9_-]{20,}"), hints=("sk-ant-",), word_start=True
        ),
        _Rule(
            "openai_key",
            r(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
            hints=("sk-",),
            word_start=True,
        ),
        _Rule(
            "google_api_key",
            r(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
            hints=("aiza",),
            word_start=True,
        ),
        _Rule(
            "aws_key_id",
            r(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}\b"),
            hints=tuple(p.lower() for p in _AWS_PREFIXES),
            word_start=True,
        ),
        _Rule(
            "github_token",
            r(r"g(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{22,255})\b"),
            hints=_GITHUB_PREFIXES,
            word_start=True,
        ),
        _Rule(
            "gitlab_token",
            r(r"gl(?:pat|dt|ptt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}"),
            hints=_GITLAB_PREFIXES,
            word_start=True,
        ),
        _Rule(
            "slack_token",
            r(r"xox[abposre]-[A-Za-z0-9-]{10,}"),
            hints=("xox",),
            word_start=True,
        ),
        _Rule(
            "slack_webhook",
            r(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{8,}"),
            hints=("hooks.slack.com",),
        ),
        _Rule(
            "jwt",
            r(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
            hints=("eyj",),
            word_start=True,
        ),
        _Rule(
            "url_password",
            r(r"://[^\s:/?#@\"'<>\\]+:(?P<secret>[^\s/?#@\"'<>\\]+)@"),
            label="secret",
            hints=("@",),
        ),
        _Rule(
            "authorization",
            r(
                r"(?i)authorization[\"']?\s*[:=]\s*\\?[\"']?"
                r"(?:(?:bearer|basic|token|digest|bot)\s+)?(?P<secret>[^\s\"'\\,;]{3,})"
            ),
            label="secret",
            anchored=True,
            hints=("authorization",),
            word_start=True,
        ),
        _Rule(
            "bearer",
            r(r"(?i)bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})"),
            label="secret",
            anchored=True,
            hints=("bearer",),
            word_start=True,
        ),
        _Rule(
            "aws_secret",
            r(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
            _mixed,
            # A bare 40-character string is only taken for an AWS secret near an AWS word.
            hints=("aws", "akia", "asia", "secret"),
        ),
        _Rule(
            "secret_flag",
            r(
                r"(?i)--(?:[a-z0-9]+-)*(?:password|passwd|passphrase|secret|token|api-?key)"
                r"(?:=|\s+)" + _VALUE
            ),
            label="secret",
            anchored=True,
            hints=("--",),
        ),
        _Rule(
            "user_password",
            r(r"-(?:u|-user)[\s=]+[^\s:\"'\\]+:(?P<secret>[^\s\"'\\]{3,})"),
            label="secret",
            hints=("-u",),
            word_start=True,
        ),
        _Rule(
            "secret_assignment",
            r(r"[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)\s*=\s*" + _VALUE),
            label="secret",
            hints=("_key", "_token", "_secret", "_pass", "_pwd"),
            word_start=True,
        ),
        _Rule(
            "secret_field",
            r(rf"(?i)(?:{_SECRET_WORDS})\b[\"']?\s*[:=]\s*" + _VALUE),
            label="secret",
            anchored=True,
            hints=_SECRET_HINTS,
        ),
    ]


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
        self._rules: list[_Rule] = _builtin_rules() if builtin else []
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
            self._rules.insert(0, _Rule(kind.lower(), regex))
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

    def _active(self, lower: str, rules: list[_Rule]) -> list[_Rule]:
        return [r for r in rules if r.hint_re is None or r.hint_re.search(lower)]

    def _text(self, text: str, rules: list[_Rule]) -> str:
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

    def _sub_at_hints(self, rule: _Rule, text: str, lower: str) -> str:
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

    def _replace(self, rule: _Rule, match: re.Match[str]) -> str:
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
            if redacted != value or field is None or not _SECRET_FIELD.match(field):
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
