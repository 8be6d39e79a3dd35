"""The built-in table of secret shapes: one :class:`RedactionRule` per shape.

A rule is a regular expression and where in its match the secret is (the
named group ``secret``, ``dq`` or ``sq``, or the whole match). Every pattern
is linear: each repetition is possessive or bounded and followed by
something it cannot consume, and a token's start is checked by a
look-behind placed right after its literal prefix (so one long run is read
once, not from every position inside it). ``bench/redact.py`` measures that
on adversarial inputs of every family.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .names import LOCAL_WORDS, SECRET_WORDS, secret_field
from .providers import PROVIDER_TOKENS

__all__ = ["RedactionRule", "builtin_rules", "secret_field"]

_VALUE_GROUPS = ("secret", "dq", "sq")


@dataclass(frozen=True)
class RedactionRule:
    """One kind of secret: its pattern, an optional check on the value, and cheap pre-checks.

    ``folded`` rules are written in lower case and run over the lower-cased text (the
    same matches as ``(?i)``, which the regex engine cannot scan for quickly); their
    ``regex`` carries ``re.IGNORECASE`` and is what runs when lower-casing would move
    characters. ``within``: the pattern's match is a command (say ``mysql …`` up to the
    end of the simple command) and the secrets are ``within``'s matches inside it, so a
    command is read once however many of its words repeat.
    """

    kind: str
    regex: re.Pattern[str]
    accept: Callable[[str], bool] | None = None
    """A check on the value: a match whose value fails it is left as it is."""
    label: str = ""
    """The placeholder's word; empty means ``kind``."""
    hints: tuple[str, ...] = ()
    """Lower-case substrings one of which every match holds (or, ``near``, the text): a
    text holding none of them is not searched."""
    near: bool = False
    folded: bool = False
    within: re.Pattern[str] | None = None
    lowered: re.Pattern[str] | None = field(default=None, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.folded:
            flags = self.regex.flags & ~re.IGNORECASE
            object.__setattr__(self, "lowered", re.compile(self.regex.pattern, flags))

    def applies(self, lower: str) -> bool:
        """Whether ``lower`` (the text, lower-cased) can hold a match, by the hints."""
        return not self.hints or any(hint in lower for hint in self.hints)

    def value_spans(self, match: re.Match[str]) -> list[tuple[int, int]]:
        """Where the values to replace are in ``match``'s string."""
        if self.within is None:
            return [_value_span(match)]
        found = self.within.finditer(match.string, match.start(), match.end())
        return [_value_span(inner) for inner in found]


def _value_span(match: re.Match[str]) -> tuple[int, int]:
    """The first non-empty value group of ``match``, else the whole match."""
    groups = match.re.groupindex
    for name in _VALUE_GROUPS:
        if name in groups:
            start, end = match.span(name)
            if end > start:
                return start, end
    return match.span()


def _after(n: int) -> str:
    """Checked right after the ``n`` characters a token starts with: they do not follow an
    ASCII letter, digit or underscore, unless that ends a JSON escape (``\\n``, ``\\t``,
    ``\\r``, ``\\u00e9``: how ``json.dumps`` writes a newline or any other letter before
    it). Any other character, an ``é`` or a CJK one, may come right before a token."""
    dots = "." * n
    return rf"(?:(?<![A-Za-z0-9_]{dots})|(?<=\\[nrt]{dots})|(?<=\\u[0-9A-Fa-f]{{4}}{dots}))"


def _token(*words: str) -> str:
    """An alternation of literal ``words``, each only where a token may start."""
    return "(?:" + "|".join(re.escape(w) + _after(len(w)) for w in words) + ")"


# A bare value (stops at quotes, separators, JSON escapes), or a quoted one, each read once.
_DQ, _SQ = r"[^\"\\\n]{1,256}+", r"[^'\\\n]{1,256}+"
_BARE = r"[^\s\"'\\,;&}\]\)>]{3,}+"
_OPEN = r"(?:\\{1,7}[\"']|[\"']|%2[27])?(?!(?:null|true|false|None)\b)"
_VALUE = rf"(?:\"(?P<dq>{_DQ})\"|'(?P<sq>{_SQ})'|{_OPEN}(?P<secret>{_BARE}))"
_VALUE_LOWER = _VALUE.replace("None", "none")  # for folded rules
# The rest of one simple command: quoted strings whole, up to a newline, |, ; or &.
_ARGS = r"""(?:[^\n|;&"']|"[^"\n]{0,256}+"|'[^'\n]{0,256}+'|["']){0,1024}+"""
_SMB_USER = r"(?:-U\s*+|--user[=\s]\s*+)[^\s%\"']{1,256}+%"
_LDAP = ("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldappasswd")
_KEYTOOL = r"-(?:src|dest|new)?(?:storepass|keypass)\s++"
_MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlshow", "mysqlcheck")


def _mixed(value: str) -> bool:
    """A 40-character AWS secret: upper, lower and a digit, and not a hex digest."""
    return (
        len(value) == 40
        and "=" not in value
        and any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and not re.fullmatch(r"[0-9a-fA-F]+", value)
    )


def _command(kind: str, words: tuple[str, ...], option: str, value: str) -> RedactionRule:
    """A password option of a command: ``words`` start it (as a token), ``option`` then
    ``value`` is looked for among its arguments."""
    hints = tuple(sorted({w.lower() for w in words}))
    return RedactionRule(
        kind,
        re.compile(_token(*words) + r"\b" + _ARGS),
        label="secret",
        hints=hints,
        within=re.compile(rf"(?<=\s){option}{value}"),
    )


def builtin_rules() -> list[RedactionRule]:
    """A fresh copy of the built-in table, in the order the rules are applied."""
    r = re.compile
    rules = [
        RedactionRule(
            "private_key",
            r(
                r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"(?:[A-Za-z0-9+/=\s:,.()]|\\{1,15}[nr]|-(?!----END))*+"
                r"(?:-----END[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?"
            ),
            hints=("private key",),
        ),
        *(
            RedactionRule(
                kind,
                r(_token(*prefixes) + rest),
                hints=tuple(sorted({p.lower() for p in prefixes})),
            )
            for kind, prefixes, rest in PROVIDER_TOKENS
        ),
        RedactionRule(
            "discord_token",
            r(
                "[MNO]"
                + _after(1)
                + r"[A-Za-z0-9]{23,25}+\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}+"
            ),
            hints=(".",),
        ),
        RedactionRule(
            "discord_webhook",
            r(r"discord(?:app)?\.com/api/webhooks/[0-9]{5,30}+/[A-Za-z0-9_-]{20,}+"),
            hints=("discord",),
        ),
        RedactionRule(
            "telegram_bot_token",
            r(r"[0-9](?<![0-9].)[0-9]{7,11}+:AA[A-Za-z0-9_-]{30,}+"),
            hints=(":aa",),
        ),
        RedactionRule(
            "sentry_dsn",
            r(r"://(?P<secret>[0-9a-f]{32})(?::[0-9a-f]{32})?@"),
            label="secret",
            hints=("@",),
        ),
        RedactionRule(
            "slack_webhook",
            r(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{8,}+"),
            hints=("hooks.slack.com",),
        ),
        RedactionRule(
            "jwt",
            r(
                r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{5,}+\.eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+"
            ),
            hints=("eyj",),
        ),
        RedactionRule(
            "url_password",
            r(r"://[^\s:/?#@\"'<>\\]{0,256}+:(?P<secret>[^\s/?#@\"'<>\\]{1,512}+)@"),
            label="secret",
            hints=("@",),
        ),
        RedactionRule(
            "azure_key",
            r(
                r"(?:accountkey|sharedaccesskey|sharedaccesssignature)\s*+=\s*+"
                r"(?P<secret>[^;\s\"'\\]{8,}+)",
                re.IGNORECASE,
            ),
            label="secret",
            hints=("accountkey", "sharedaccesskey", "sharedaccesssignature"),
            folded=True,
        ),
        RedactionRule(
            "sas_signature",
            r(r"[?&]sig=(?P<secret>[^&\s\"'<>\\]{8,}+)"),
            label="secret",
            hints=("sig=",),
        ),
        RedactionRule(
            "authorization",
            r(
                "authorization" + _after(13) + r"\\?[\"']?\s*+[:=]\s*+\\?[\"']?"
                r"(?:(?:bearer|basic|token|digest|bot)\s++)?(?P<secret>[^\s\"'\\,;]{3,}+)",
                re.IGNORECASE,
            ),
            label="secret",
            hints=("authorization",),
            folded=True,
        ),
        RedactionRule(
            "bearer",
            r("bearer" + _after(6) + r"\s++(?P<secret>[a-z0-9._~+/=-]{12,}+)", re.IGNORECASE),
            label="secret",
            hints=("bearer",),
            folded=True,
        ),
        RedactionRule(
            "cookie",
            r(r"cookie\\?[\"']?\s*+:\s*(?P<secret>[^\n\r\"\\]{3,4096}+)", re.IGNORECASE),
            label="secret",
            hints=("cookie",),
            folded=True,
        ),
        RedactionRule(
            "aws_secret",
            # Whole runs, read once from their first character; only a run of 40 is taken.
            r(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40,}+"),
            _mixed,
            # A bare 40-character string is only taken for an AWS secret near an AWS word.
            hints=("aws", "akia", "asia", "secret"),
            near=True,
        ),
        RedactionRule(
            "secret_flag",
            r(
                r"--(?<![\w-]--)(?i:(?:[a-z0-9]++-){0,4}"
                r"(?:password|passwd|passphrase|secret|token|api-?key|cookie))"
                r"(?:=|(?:[ \t]|\\\r?\n)++)" + _VALUE
            ),
            label="secret",
            hints=("pass", "secret", "token", "api-key", "apikey", "cookie"),
        ),
        RedactionRule(
            "user_password",
            r(
                "-" + _after(1) + r"(?:u|-user)[\s=]*+[^\s:\"'\\]{1,256}+:"
                r"(?P<secret>[^\s\"'\\]{3,}+)"
            ),
            label="secret",
            hints=("-u",),
        ),
        _command(
            "mysql_password",
            (*_MYSQL, "mariadb", "mariadb-dump"),
            "-p",
            r"(?P<secret>[^\s\"'\\]{1,256}+)",
        ),
        _command("password_option", ("sshpass", "login"), r"-p[\s=]*+", _VALUE),
        _command("curl_cookie", ("curl",), r"-b\s*+", _VALUE),
        _command(
            "htpasswd", ("htpasswd",), r"-[A-Za-z]*b[A-Za-z]*(?:\s++[^\s-]\S*+){1,2}\s++", _VALUE
        ),
        _command("smbclient", ("smbclient", "rpcclient", "smbmap"), _SMB_USER, _VALUE),
        _command("ldap_password", _LDAP, r"-w\s*+", _VALUE),
        _command("keytool", ("keytool", "jarsigner"), _KEYTOOL, _VALUE),
        _command("ssh_keygen", ("ssh-keygen",), r"-[NP]\s*+", _VALUE),
        _command(
            "mongo_password", ("mongosh", "mongo", "mongodump", "mongorestore"), r"-p\s++", _VALUE
        ),
        _command("redis_password", ("redis-cli",), r"-a\s*+", _VALUE),
        RedactionRule(
            "openssl_pass",
            r(r"pass:(?<![A-Za-z0-9_]pass:)(?P<secret>[^\s\"'\\]{1,256}+)"),
            label="secret",
            hints=("pass:",),
        ),
        RedactionRule(
            "piped_password",
            r(
                _token("echo", "printf")
                + r"\s++(?:-[neE]{1,3}\s++)?"
                + _VALUE
                + r"\s*+\|\s*+(?=sudo\b[^\n|;&]{0,64}?\s-[A-Za-z]*S"
                r"|[^\n|;&]{0,256}?--password-stdin)"
            ),
            label="secret",
            hints=("echo", "printf"),
        ),
        RedactionRule(
            "pgpass_line",
            r(
                r"(?m)^[^\s:#]{1,256}+:(?:[0-9]{1,5}|\*):[^\s:]{1,256}+:[^\s:]{1,256}+:"
                r"(?P<secret>\S{1,256}+)$"
            ),
            label="secret",
            hints=(":",),
        ),
        RedactionRule(
            "auth_tuple",
            r(
                r"auth\s*+=\s*+\(\s*+[\"'][^\"'\n]{1,256}+[\"']\s*+,\s*+"
                r"[\"'](?P<secret>[^\"'\n]{1,256}+)[\"']"
            ),
            label="secret",
            hints=("auth",),
        ),
        RedactionRule(
            "connection_password",
            r(r"pwd(?<![a-z0-9_]pwd)\s*+=\s*+(?P<secret>[^;\"'\\\n]{1,256}+)", re.IGNORECASE),
            label="secret",
            hints=("pwd",),
            folded=True,
        ),
        RedactionRule(
            "xml_secret",
            r(
                rf"<(?:{SECRET_WORDS}|pass|pwd)>(?P<secret>[^<\n]{{1,256}}+)</",
                re.IGNORECASE,
            ),
            label="secret",
            hints=("</",),
            folded=True,
        ),
        RedactionRule(
            "pass_field",
            r(r"pass(?<=[\"']pass)\\{0,7}[\"']\s*+[:=]\s*+" + _VALUE_LOWER, re.IGNORECASE),
            label="secret",
            hints=("pass",),
            folded=True,
        ),
        RedactionRule(
            "netrc",
            r(
                r"(?:machine\s++\S{1,256}+|default)(?:\s++(?:login|account|port)\s++\S{1,256}+){0,4}"
                r"\s++password\s++(?P<secret>\S{1,256}+)",
                re.IGNORECASE,
            ),
            label="secret",
            hints=("machine", "default"),
            folded=True,
        ),
        RedactionRule(
            "secret_assignment",
            r(
                r"[A-Z]" + _after(1) + r"[A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)"
                r"\s*+=\s*+" + _VALUE
            ),
            label="secret",
            hints=("_key", "_token", "_secret", "_pass", "_pwd"),
        ),
        RedactionRule(
            "secret_field",
            r(
                rf"(?:{SECRET_WORDS}|{LOCAL_WORDS})(?:[_-]?(?:key|value|hash|b64|base64))?\b"
                r"(?:\\{0,7}[\"']|%2[27]|\]|%5d)?\s*+(?:[:=：]|%3[ad])\s*+" + _VALUE_LOWER,
                re.IGNORECASE,
            ),
            label="secret",
            hints=("pass", "secret", "token", "credential", "key", *LOCAL_WORDS.split("|")),
            folded=True,
        ),
    ]
    return rules
