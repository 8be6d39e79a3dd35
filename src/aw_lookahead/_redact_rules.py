"""The built-in pattern table behind :class:`~aw_lookahead.redact.Redactor`.

Each :class:`Rule` is one shape of secret (a provider's key prefix, a
header, a secret-named assignment) with cheap pre-checks (``hints``,
``word_start``, ``anchored``) that let the redactor skip or anchor the regex,
since it runs on every request and record. :data:`SECRET_FIELD` tells which
JSON keys name a secret. What is recognised, and why a table of our own, is
documented in :mod:`aw_lookahead.redact`, which applies these rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["SECRET_FIELD", "Rule", "builtin_rules"]

# Names that say "this value is a secret", shared by text assignments and JSON keys.
_SECRET_WORDS = (
    r"password|passwd|passphrase|secret|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
)
SECRET_FIELD = re.compile(
    rf"(?i:^(?:.*[_.-])?(?:{_SECRET_WORDS}|pwd|authorization|cookie)$)|^[A-Z0-9_]*_KEY$"
)
"""Field names (JSON keys) whose value is a secret whatever it looks like."""
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
class Rule:
    """One kind of secret: its pattern, an optional check on the value, and its pre-checks."""

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


def builtin_rules() -> list[Rule]:
    """A fresh copy of the built-in table, in the order the rules are applied."""
    r = re.compile
    return [
        Rule(
            "private_key",
            r(
                r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"(?:.*?-----END[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"|(?:[A-Za-z0-9+/=\s]|\\[nr])*)",
                re.DOTALL,
            ),
            hints=("private key",),
        ),
        Rule("anthropic_key", r(r"sk-ant-[A-Za-z0-9_-]{20,}"), hints=("sk-ant-",), word_start=True),
        Rule(
            "openai_key",
            r(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
            hints=("sk-",),
            word_start=True,
        ),
        Rule(
            "google_api_key",
            r(r"AIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
            hints=("aiza",),
            word_start=True,
        ),
        Rule(
            "aws_key_id",
            r(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|NPA|NVA|IPA)[0-9A-Z]{16}\b"),
            hints=tuple(p.lower() for p in _AWS_PREFIXES),
            word_start=True,
        ),
        Rule(
            "github_token",
            r(r"g(?:h[pousr]_[A-Za-z0-9]{36,255}|ithub_pat_[A-Za-z0-9_]{22,255})\b"),
            hints=_GITHUB_PREFIXES,
            word_start=True,
        ),
        Rule(
            "gitlab_token",
            r(r"gl(?:pat|dt|ptt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}"),
            hints=_GITLAB_PREFIXES,
            word_start=True,
        ),
        Rule(
            "slack_token",
            r(r"xox[abposre]-[A-Za-z0-9-]{10,}"),
            hints=("xox",),
            word_start=True,
        ),
        Rule(
            "slack_webhook",
            r(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{8,}"),
            hints=("hooks.slack.com",),
        ),
        Rule(
            "jwt",
            r(r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
            hints=("eyj",),
            word_start=True,
        ),
        Rule(
            "url_password",
            r(r"://[^\s:/?#@\"'<>\\]+:(?P<secret>[^\s/?#@\"'<>\\]+)@"),
            label="secret",
            hints=("@",),
        ),
        Rule(
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
        Rule(
            "bearer",
            r(r"(?i)bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,})"),
            label="secret",
            anchored=True,
            hints=("bearer",),
            word_start=True,
        ),
        Rule(
            "aws_secret",
            r(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])"),
            _mixed,
            # A bare 40-character string is only taken for an AWS secret near an AWS word.
            hints=("aws", "akia", "asia", "secret"),
        ),
        Rule(
            "secret_flag",
            r(
                r"(?i)--(?:[a-z0-9]+-)*(?:password|passwd|passphrase|secret|token|api-?key)"
                r"(?:=|\s+)" + _VALUE
            ),
            label="secret",
            anchored=True,
            hints=("--",),
        ),
        Rule(
            "user_password",
            r(r"-(?:u|-user)[\s=]+[^\s:\"'\\]+:(?P<secret>[^\s\"'\\]{3,})"),
            label="secret",
            hints=("-u",),
            word_start=True,
        ),
        Rule(
            "secret_assignment",
            r(r"[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)\s*=\s*" + _VALUE),
            label="secret",
            hints=("_key", "_token", "_secret", "_pass", "_pwd"),
            word_start=True,
        ),
        Rule(
            "secret_field",
            r(rf"(?i)(?:{_SECRET_WORDS})\b[\"']?\s*[:=]\s*" + _VALUE),
            label="secret",
            anchored=True,
            hints=_SECRET_HINTS,
        ),
    ]
