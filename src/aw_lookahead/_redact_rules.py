"""The built-in pattern table behind :class:`~aw_lookahead.redact.Redactor`.

Each :class:`~aw_lookahead._secret_rule.Rule` of :func:`builtin_rules` is one
shape of secret (a provider's key prefix, a header, a secret-named
assignment) with its pre-checks; :func:`secret_field` tells which JSON keys
name a secret. What is recognised, and why a table of our own, is documented
in :mod:`aw_lookahead.redact`, which applies these rules.
"""

from __future__ import annotations

import re

from ._pattern_forms import WORD_START, starts_word
from ._secret_rule import Rule
from ._split_forms import ValueForm

__all__ = ["WORD_START", "Rule", "builtin_rules", "secret_field", "starts_word"]

# Names that say "this value is a secret", shared by text assignments and JSON keys.
_SECRET_WORDS = (
    r"password|passwd|passphrase|secret|token|credentials?|"
    r"api[_-]?key|apikey|access[_-]?key|private[_-]?key|auth[_-]?key"
)
# The same in other languages (labels in config files, prompts and tool output).
_LOCAL_WORDS = (
    "passwort|kennwort|contraseña|contrasena|senha|mot de passe|mot_de_passe|motdepasse|"
    "wachtwoord|hasło|haslo|lösenord|losenord|salasana|adgangskode|passord|parola|şifre|sifre|"
    "heslo|jelszó|clé secrète|clave secreta|chave secreta|пароль|密码|密碼|口令|"
    "パスワード|비밀번호|κωδικός|סיסמה|كلمة المرور|mật khẩu"
)
_FIELD_NAME = re.compile(
    rf"(?:^|[_.\- ])(?:{_SECRET_WORDS}|{_LOCAL_WORDS}|pwd|authorization|cookie|"
    r"account_?key|shared_?access_?key|connection_?string|session_?id|sessid)"
    r"(?:[_-](?:key|value|hash|b64|base64))?$"
)
_FIELD_WORDS = tuple(f"{_SECRET_WORDS}|{_LOCAL_WORDS}".split("|"))
"""The words that lead the ``secret_field`` pattern, one by one."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def secret_field(name: str) -> bool:
    """Whether a JSON key names a secret whatever its value looks like.

    Words are found in snake, kebab, dotted and camel case alike (``password``,
    ``userPassword``, ``SecretAccessKey``, ``x-api-key``, ``db.client_secret``),
    and upper-case environment names ending in ``_KEY`` count too.
    """
    if re.fullmatch(r"[A-Z0-9_]*_KEY", name):
        return True
    return _FIELD_NAME.search(_CAMEL.sub("_", name).lower()) is not None


_SECRET_HINTS = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "apikey", "api_key",
    "api-key", "accesskey", "access_key", "access-key", "privatekey", "private_key",
    "private-key", "authkey", "auth_key", "auth-key",
    *_LOCAL_WORDS.split("|"),
)  # fmt: skip
# A bare value (stops at quotes, separators, JSON escapes), or a quoted one. Quantifiers
# are possessive: a value is read once, never re-scanned from a later start.
_DQ, _SQ = r"[^\"\\\n]{1,256}+", r"[^'\\\n]{1,256}+"
_BARE = r"[^\s\"'\\,;&}\]\)>]{3,}+"
# An escaped quote written as its own branch: each branch then starts with a literal
# or a class, which re skips at a glance (the optional backslash was a repeat tried).
_OPEN = r"(?:\\[\"']|[\"']|%2[27])?(?!(?:null|true|false|None)\b)"
_VALUE = rf"(?:\"(?P<dq>{_DQ})\"|'(?P<sq>{_SQ})'|{_OPEN}(?P<secret>{_BARE}))"
_VALUE_ANY_CASE = _VALUE.replace("None", "none")  # the same under (?i), and lower-case
# The same alternatives for a dense split (Rule.value_form): the opening quote is read
# before the value, which one group holds whatever its kind, and the closing quote is
# looked ahead at (no name starts with it). Backtracking tries the alternatives in the
# same order: a quote, then its value up to the closing quote; else the bare value.
_VALUE_FORM = ValueForm(
    _VALUE,
    rf"(?:(?P<aw_q1>\")|(?P<aw_q2>')|{_OPEN})",
    rf"(?P<aw_value>(?(aw_q1){_DQ}(?=\")|(?(aw_q2){_SQ}(?=')|{_BARE})))",
)
_VALUE_FORM_ANY_CASE = ValueForm(
    _VALUE_ANY_CASE, _VALUE_FORM.openers.replace("None", "none"), _VALUE_FORM.value
)
# The signs right before the value (ValueForm.signs): of an assignment, of a name's value.
_ASSIGNED_FORM = _VALUE_FORM._replace(signs=("=",))
_NAMED_FORM = _VALUE_FORM_ANY_CASE._replace(signs=(":", "=", "：", "%3a", "%3d"))


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


# Provider tokens recognised by their prefix alone: (kind, pattern, hints, anchors). Anchors
# (where every match starts, lower case) are given where the pattern starts with a class or an
# alternation, which the regex engine tries at every position instead of scanning for a literal.
_PREFIXED: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "stripe_key",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}+",
        ("k_live_", "k_test_"),
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    ),
    ("huggingface_token", r"hf_[A-Za-z0-9]{30,}+", ("hf_",), ()),
    ("npm_token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", ("npm_",), ()),
    ("pypi_token", r"pypi-AgE[A-Za-z0-9_-]{50,}+", ("pypi-age",), ()),
    ("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",), ()),
    (
        "google_oauth_token",
        r"(?:ya29\.|GOCSPX-)[A-Za-z0-9_-]{20,}+",
        ("ya29.", "gocspx-"),
        ("ya29.", "gocspx-"),
    ),
    ("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}", ("_v1_",), ()),
    ("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shp",), ()),
    ("databricks_token", r"dapi[a-f0-9]{32}(?![a-f0-9])", ("dapi",), ()),
)
# Commands that take a password glued to -p (mysql -pPW) or after it (sshpass -p PW, login -p PW).
_MYSQL = r"mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump"
_ARGS = r"[^\n|;&]{0,512}?"  # the rest of one simple command, bounded
_START = WORD_START.pattern


def builtin_rules() -> list[Rule]:
    """A fresh copy of the built-in table, in the order the rules are applied."""
    r = re.compile
    return [
        Rule(
            "private_key",
            # Possessive body: a run of BEGIN markers is read once (it was quadratic).
            r(
                r"-----BEGIN[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
                r"(?:[A-Za-z0-9+/=\s:,.()]|\\{1,3}[nr]|-(?!----END))*+"
                r"(?:-----END[A-Z ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?"
            ),
            hints=("private key",),
        ),
        Rule(
            "anthropic_key",
            r(r"sk-ant-[A-Za-z0-9_-]{20,}+"),
            hints=("sk-ant-",),
            word_start=True,
        ),
        Rule(
            "openai_key",
            r(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}+"),
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
            word_start=True,
        ),
        Rule(
            "github_token",
            r(r"g(?:h[pousr]_[A-Za-z0-9]{36,255}+|ithub_pat_[A-Za-z0-9_]{22,255}+)\b"),
            word_start=True,
        ),
        Rule(
            "gitlab_token",
            r(r"gl(?:pat|dt|ptt|rt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}+"),
            word_start=True,
        ),
        Rule(
            "slack_token",
            r(r"xox[abposre]-[A-Za-z0-9-]{10,}+"),
            hints=("xox",),
            word_start=True,
        ),
        *(
            Rule(kind, r(p), hints=hints, word_start=True, anchored=bool(a), anchors=a)
            for kind, p, hints, a in _PREFIXED
        ),
        Rule(
            "slack_webhook",
            r(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]{8,}+"),
            hints=("hooks.slack.com",),
        ),
        Rule(
            "jwt",
            # The look-behind after the literal keeps the literal scan and tries only run starts.
            r(
                r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{5,}+\.eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+"
            ),
            hints=("eyj",),
        ),
        Rule(
            "url_password",
            r(r"://[^\s:/?#@\"'<>\\]{0,256}+:(?P<secret>[^\s/?#@\"'<>\\]{1,512}+)@"),
            label="secret",
            hints=("@",),
        ),
        Rule(
            "azure_key",
            r(
                r"(?i)(?:accountkey|sharedaccesskey|sharedaccesssignature)\s*=\s*"
                r"(?P<secret>[^;\s\"'\\]{8,}+)"
            ),
            label="secret",
            anchored=True,
            hints=("accountkey", "sharedaccesskey", "sharedaccesssignature"),
            marks=("=",),
        ),
        Rule(
            "sas_signature",
            r(r"[?&]sig=(?P<secret>[^&\s\"'<>\\]{8,}+)"),
            label="secret",
            anchored=True,
            hints=("sig=",),
            anchors=("?sig=", "&sig="),
        ),
        Rule(
            "authorization",
            r(
                r"(?i)authorization\\?[\"']?\s*[:=]\s*\\?[\"']?"
                r"(?:(?:bearer|basic|token|digest|bot)\s+)?(?P<secret>[^\s\"'\\,;]{3,}+)"
            ),
            label="secret",
            anchored=True,
            hints=("authorization",),
            marks=(":", "="),
            word_start=True,
        ),
        Rule(
            "bearer",
            r(r"(?i)bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{12,}+)"),
            label="secret",
            anchored=True,
            hints=("bearer",),
            word_start=True,
        ),
        Rule(
            "cookie",
            r(r"(?i)cookie\\?[\"']?\s*:\s*(?P<secret>[^\n\r\"\\]{3,4096}+)"),
            label="secret",
            anchored=True,
            hints=("cookie",),
            marks=(":",),
        ),
        Rule(
            "aws_secret",
            # Whole runs, read once; only a run of exactly 40 is taken (see _mixed).
            r(r"[A-Za-z0-9/+=]{40,}+"),
            _mixed,
            # A bare 40-character string is only taken for an AWS secret near an AWS word.
            hints=("aws", "akia", "asia", "secret"),
            near=True,
        ),
        Rule(
            "secret_flag",
            # Not anchored: the literal "--" scans fast, and the look-behind after it rejects
            # the inside of "-----" at once.
            r(
                r"--(?<![\w-]--)(?i:(?:[a-z0-9]+-){0,4}"
                r"(?:password|passwd|passphrase|secret|token|api-?key|cookie))"
                r"(?:=|\s+)" + _VALUE
            ),
            label="secret",
            value_form=_VALUE_FORM,
            hints=("pass", "secret", "token", "api-key", "apikey", "cookie"),
        ),
        Rule(
            "user_password",
            r(r"-(?:u|-user)[\s=]*[^\s:\"'\\]{1,256}+:(?P<secret>[^\s\"'\\]{3,}+)"),
            label="secret",
            hints=("-u",),
            marks=(":",),
            word_start=True,
        ),
        Rule(
            "mysql_password",
            r(rf"{_START}(?:{_MYSQL})\b{_ARGS}\s-p(?P<secret>[^\s\"'\\]{{1,256}}+)"),
            label="secret",
            anchored=True,
            hints=("mysql", "mariadb"),
        ),
        Rule(
            "password_option",
            r(rf"{_START}(?:sshpass|login)\b{_ARGS}\s-p[\s=]*" + _VALUE),
            label="secret",
            value_form=_VALUE_FORM,
            anchored=True,
            hints=("sshpass", "login"),
        ),
        Rule(
            "curl_cookie",
            r(_START + r"curl\b" + _ARGS + r"\s-b\s*" + _VALUE),
            label="secret",
            value_form=_VALUE_FORM,
            anchored=True,
            hints=("curl",),
        ),
        Rule(
            "netrc",
            r(
                r"(?i)(?:machine\s+\S{1,256}+|default)(?:\s+(?:login|account|port)\s+\S{1,256}+){0,4}"
                r"\s+password\s+(?P<secret>\S{1,256}+)"
            ),
            label="secret",
            anchored=True,
            hints=("machine", "default"),
        ),
        Rule(
            "secret_assignment",
            r(r"[A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASS|PWD)\s*=\s*" + _VALUE),
            label="secret",
            value_form=_ASSIGNED_FORM,
            hints=("_key", "_token", "_secret", "_pass", "_pwd"),
            marks=("=",),
            word_start=True,
        ),
        Rule(
            "secret_field",
            r(
                rf"(?i)(?:{_SECRET_WORDS}|{_LOCAL_WORDS})(?:[_-](?:key|value|hash|b64|base64))?\b"
                r"(?:\\?[\"']|%2[27]|\]|%5d)?\s*(?:[:=：]|%3[ad])\s*" + _VALUE_ANY_CASE
            ),
            label="secret",
            value_form=_NAMED_FORM,
            anchored=True,
            # Five searches rule most texts out; the anchors are only looked for after them.
            hints=("pass", "secret", "token", "credential", "key", *_LOCAL_WORDS.split("|")),
            anchors=_SECRET_HINTS,
            lead=_FIELD_WORDS,
            marks=(":", "=", "：", "%3a", "%3d"),
        ),
    ]
