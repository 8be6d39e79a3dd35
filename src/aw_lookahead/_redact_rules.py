"""The built-in pattern table behind :class:`~aw_lookahead.redact.Redactor`.

Each :class:`Rule` is one shape of secret (a provider's key prefix, a
header, a secret-named assignment) with cheap pre-checks (``hints``,
``word_start``, ``anchored``) that let the redactor skip or anchor the regex,
since it runs on every request and record. :data:`SECRET_FIELD` tells which
JSON keys name a secret. What is recognised, and why a table of our own, is
documented in :mod:`aw_lookahead.redact`, which applies these rules.
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

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
_VALUE = (
    r"(?:\"(?P<dq>[^\"\\\n]{1,256}+)\"|'(?P<sq>[^'\\\n]{1,256}+)'"
    r"|(?:\\?[\"']|%2[27])?(?!(?:null|true|false|None)\b)"
    r"(?P<secret>[^\s\"'\\,;&}\]\)>]{3,}+))"
)
_VALUE_ANY_CASE = _VALUE.replace("None", "none")  # the same under (?i), and lower-case
_VALUE_GROUPS = ("secret", "dq", "sq")
"""The named groups that hold the value to replace, in the order they are looked at."""
_SCAN_EVERY = 256
"""An anchored rule with more anchors than one per this many characters scans instead."""


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
    near: bool = False
    """The hints are words near a match, not in it; then a placeholder's words count too."""
    word_start: bool = False
    """The match must not follow an ASCII letter, digit or underscore (checked here, not in the
    regex, so the regex keeps its literal prefix and scans fast). Any other letter, an ``é`` or a
    CJK character, may come right before a token."""
    anchored: bool = False
    """Every match starts where an anchor occurs: try the regex only there (for patterns such
    as case-insensitive alternations that the regex engine cannot scan for quickly)."""
    anchors: tuple[str, ...] = ()
    """Lower-case substrings where matches start; empty means ``hints``."""
    scan: re.Pattern[str] | None = field(default=None, init=False, compare=False)
    """For an anchored ``(?i)`` rule: its pattern without ``(?i)``, run over the lower-cased
    text when that is ASCII and the anchors are many (same matches, same spans: the pattern is
    written in lower case), so the regex engine scans instead of one call per anchor."""
    lead: tuple[str, ...] = ()
    """For a ``(?i)`` pattern that starts with a group of alternative words,
    ``(?i)(?:w1|w2|…)rest``: the words, as written there (lower case)."""
    branches: tuple[tuple[str, re.Pattern[str]], ...] = field(default=(), init=False, compare=False)
    """From :attr:`lead`: each word's literal start with ``word + rest`` compiled, run over the
    lower-cased text; a pattern led by a literal is scanned for as fast as a substring."""
    groups: tuple[str, ...] = field(default=(), init=False, compare=False)
    """The value groups this pattern has (``secret``, ``dq``, ``sq``), first found is replaced."""
    bare: tuple[re.Pattern[str] | None, ...] = field(default=(), init=False, compare=False)
    """The pattern, :attr:`scan` and :attr:`branches` without capturing groups (same matches,
    ``findall`` gives their texts without a match object each); empty when one cannot be made."""
    runs: tuple[bytes, int] | None = field(default=None, init=False, compare=False)
    """For a pattern that is one ASCII class repeated at least ``n`` times, possessively
    (``[A-Za-z0-9/+=]{40,}+``): a ``bytes.translate`` table marking the class, and ``n``.
    Its matches are the maximal runs of ``n`` or more, found with ``bytes.find`` instead of
    a regex attempt at every character of the class."""

    def __post_init__(self) -> None:
        source = self.regex.pattern
        if self.anchored and source.startswith("(?i)"):
            object.__setattr__(self, "scan", re.compile(source[4:]))
        if self.lead:
            object.__setattr__(self, "branches", _branches(self.kind, source, self.lead))
        names = tuple(g for g in _VALUE_GROUPS if g in self.regex.groupindex)
        object.__setattr__(self, "groups", names)
        object.__setattr__(self, "bare", _bare_all(self.regex, self.scan, self.lead))
        object.__setattr__(self, "runs", _runs_of(self.regex.pattern, self.regex.flags))

    def applies(self, lower: str, ascii_only: bool) -> bool:
        """Whether ``lower`` (the lower-cased text) can hold a match at all.

        Hints that are not ASCII are skipped for ASCII text (``ascii_only``), a
        test that costs far less than a search.
        """
        return not self.hints or any(
            hint in lower for hint in self.hints if not ascii_only or hint.isascii()
        )

    def value_span(self, match: re.Match[str]) -> tuple[int, int]:
        """Where the value to replace is in ``match``'s string: the first non-empty value group
        (the whole match when the pattern has none)."""
        for name in self.groups:
            start, end = match.span(name)
            if end > start:
                return start, end
        return match.span()

    def matches(
        self,
        text: str,
        lower: str,
        has: Callable[[str], bool] | None = None,
        narrow: Callable[[], bytes] | None = None,
    ) -> list[re.Match[str]]:
        """This rule's matches in ``text``, in order; ``lower`` is ``text.lower()``.

        Their spans index ``text`` (a match of :attr:`scan` is one on ``lower``,
        with the same spans). Matches that fail :attr:`word_start` are left out.
        ``has`` tells whether a word is in ``lower`` (remembered across rules);
        with it, absent anchors are not looked for and :attr:`branches` are used.
        ``narrow`` gives a one-byte copy of ``lower`` (each wider character a ``?``)
        where ASCII anchors are found faster than in a wide text.
        """
        has = has or lower.__contains__
        if self.runs is not None:
            return self._runs(text)
        if not self.anchored or len(lower) != len(text):
            found = list(self.regex.finditer(text))
        elif self.branches and lower.isascii():
            found = self._by_branches(lower, has)
        elif (starts := self._anchor_starts(lower, has, narrow)) is None:
            assert self.scan is not None
            found = list(self.scan.finditer(lower))
        else:
            found = []
            for at in starts:
                match = self.regex.match(text, at) if not found or at >= found[-1].end() else None
                if match is not None:
                    found.append(match)
        return self._word_starts(text, found)

    def _runs(self, text: str) -> list[re.Match[str]]:
        """The matches of a :attr:`runs` pattern: each maximal run of its class, from where
        ``bytes.find`` sees ``n`` of the class in a row (in a one-byte copy of ``text``, each
        wider character a ``?``, which the class does not hold)."""
        assert self.runs is not None
        table, least = self.runs
        marks = text.encode("ascii", "replace").translate(table)
        need = b"a" * least
        found: list[re.Match[str]] = []
        at = marks.find(need)
        while at >= 0:
            match = self.regex.match(text, at)
            assert match is not None
            found.append(match)
            at = marks.find(need, match.end())
        return self._word_starts(text, found)

    def _word_starts(self, text: str, found: list[re.Match[str]]) -> list[re.Match[str]]:
        """``found`` less the matches that fail :attr:`word_start`."""
        if not self.word_start:
            return found
        return [m for m in found if starts_word(text, m.start())]

    def bulk(
        self, text: str, lower: str, has: Callable[[str], bool]
    ) -> tuple[list[re.Match[str]], bool] | None:
        """This rule's matches in a large ``text``, or for one dense with a few repeated
        matches, one match of each distinct match text; None: use :meth:`matches`.

        ``(matches, False)``: the matches, as :meth:`matches` gives them (there were few).
        ``(representatives, True)``: one match per distinct match text, in order of first
        occurrence, and replacing every occurrence of those texts (``str.replace``) rewrites
        exactly the rule's matches. That is taken when each text occurs exactly as often as
        it is matched (in ``text`` and, for a scan of the lower-cased text, there too), none
        can overlap another or itself, none holds a bracket (so none can appear across a
        placeholder's edge), and for a :attr:`word_start` rule no occurrence follows a word
        character. Past the first matches, their texts come from ``findall`` of :attr:`bare`:
        no match object each.
        """
        if self.runs is not None:
            return self._runs(text), False
        if not self.bare:
            return None
        regex, scan, *branches = self.bare
        if self.anchored and self.branches and len(lower) == len(text) and lower.isascii():
            found = []
            for (literal, branch), bare_branch in zip(self.branches, branches, strict=True):
                if not has(literal):
                    continue
                assert bare_branch is not None
                head = list(itertools.islice(branch.finditer(lower), _MANY))
                texts = list(map(re.Match.group, head))
                if len(set(texts)) > _FEW_REPEATED:
                    return None  # not a few repeated texts: the rest need not be read
                found += texts
                if len(head) == _MANY:
                    found += bare_branch.findall(lower, head[-1].end())
            if len(found) < _MANY:
                return None
            on, matcher = lower, self.scan
        else:
            if not self.anchored or len(lower) != len(text):
                on, matcher, bare = text, self.regex, regex
            elif scan is not None and lower.isascii() and self._anchor_starts(lower, has) is None:
                on, matcher, bare = lower, self.scan, scan
            else:
                return None
            assert matcher is not None
            assert bare is not None
            head = list(itertools.islice(matcher.finditer(on), _MANY))
            if len(head) < _MANY:
                return self._word_starts(text, head), False
            texts = list(map(re.Match.group, head))
            if len(set(texts)) > _FEW_REPEATED:
                return None
            found = [*texts, *bare.findall(on, head[-1].end())]
        counts = Counter(found)
        if len(counts) > _FEW_REPEATED:
            return None
        reps: list[re.Match[str]] = []
        for whole, count in counts.items():
            at = on.find(whole)
            first = text[at : at + len(whole)]
            if on.count(whole) != count or (on is not text and text.count(first) != count):
                return None
            if "[" in first or "]" in first or (self.word_start and _after_word(text, first)):
                return None
            assert matcher is not None
            match = matcher.match(on, at)
            if match is None or match.end() != at + len(whole):
                return None
            reps.append(match)
        if not _apart(list(counts)):
            return None
        return sorted(reps, key=re.Match.start), True

    def _by_branches(self, lower: str, has: Callable[[str], bool]) -> list[re.Match[str]]:
        """What :attr:`scan` finds in ``lower``, from the branches whose word is present.

        Each branch is scanned on its own; when their matches do not overlap
        they are exactly the scan's (at any start, at most one word's text can
        be there); when they do, the scan itself decides.
        """
        runs = [list(b.finditer(lower)) for literal, b in self.branches if has(literal)]
        runs = [run for run in runs if run]
        if len(runs) < 2:
            return runs[0] if runs else []
        found = [m for run in runs for m in run]
        found.sort(key=re.Match.span)
        found = list(dict(zip(map(re.Match.span, found), found, strict=True)).values())
        ends = map(re.Match.end, found)
        if all(map(operator.le, ends, map(re.Match.start, found[1:]))):
            return found
        assert self.scan is not None
        return list(self.scan.finditer(lower))

    def _anchor_starts(
        self,
        lower: str,
        has: Callable[[str], bool],
        narrow: Callable[[], bytes] | None = None,
    ) -> list[int] | None:
        """Where the anchors are, in order; None past one per ``_SCAN_EVERY`` characters of
        ASCII text when :attr:`scan` can take over. In a wide text, ASCII anchors are
        looked for in ``narrow()`` (the same positions, one byte a character)."""
        ascii_only = lower.isascii()
        limit = len(lower) // _SCAN_EVERY + 32 if self.scan is not None else -1
        starts: set[int] = set()
        for hint in self.anchors or self.hints:
            if not has(hint):
                continue
            on: str | bytes = lower
            word: str | bytes = hint
            if narrow is not None and not ascii_only and hint.isascii() and "?" not in hint:
                on, word = narrow(), hint.encode()
            at = on.find(word)  # type: ignore[arg-type]
            while at >= 0:
                starts.add(at)
                if len(starts) == limit and ascii_only:
                    return None
                at = on.find(word, at + 1)  # type: ignore[arg-type]
        return sorted(starts)


_FEW_REPEATED = 16
"""The most distinct match texts :meth:`Rule.bulk` replaces by ``str.replace``."""
_MANY = 256
"""From this many matches on, :meth:`Rule.bulk` reads the rest as texts (``findall``)."""


@functools.cache
def _branches(
    kind: str, source: str, lead: tuple[str, ...]
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """:attr:`Rule.branches` of a pattern ``(?i)(?:w1|w2|…)rest`` led by the words ``lead``."""
    head = "(?i)(?:" + "|".join(lead) + ")"
    if not source.startswith(head):
        raise ValueError(f"{kind}: the pattern does not start with its lead words")
    rest = source[len(head) :]
    return tuple((_literal_start(w), re.compile(w + rest)) for w in lead)


def _bare_all(
    regex: re.Pattern[str], scan: re.Pattern[str] | None, lead: tuple[str, ...]
) -> tuple[re.Pattern[str] | None, ...]:
    """:attr:`Rule.bare`: the pattern, its scan and its branches without capturing groups."""
    key = (regex.pattern, regex.flags, scan is not None, lead)
    done = _BARE.get(key)
    if done is None:
        branches = _branches("", regex.pattern, lead) if lead else ()
        patterns = (regex, scan, *(b for _, b in branches))
        bare = tuple(_bare(p) if p is not None else None for p in patterns)
        fit = all(b is not None for b, p in zip(bare, patterns, strict=True) if p is not None)
        done = _BARE[key] = bare if fit else ()
    return done


_BARE: dict[tuple[str, int, bool, tuple[str, ...]], tuple[re.Pattern[str] | None, ...]] = {}


@functools.cache
def _runs_of(source: str, flags: int) -> tuple[bytes, int] | None:
    """:attr:`Rule.runs` of a pattern, or None when it is not one class repeated."""
    shape = re.fullmatch(r"\[([^\]\\]+)\]\{(\d+),\}\+", source)
    if shape is None or flags & ~re.UNICODE:
        return None
    one = re.compile(f"[{shape.group(1)}]")
    if one.fullmatch("?") or any(one.fullmatch(chr(c)) for c in range(128, 256)):
        return None
    table = bytes(ord("a") if one.fullmatch(chr(c)) else ord(" ") for c in range(256))
    return table, int(shape.group(2))


def _bare(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` with its named groups made non-capturing; None if it still captures."""
    return _bare_source(pattern.pattern, pattern.flags)


@functools.cache
def _bare_source(source: str, flags: int) -> re.Pattern[str] | None:
    if "(?P=" in source or "(?(" in source:
        return None
    bare = re.compile(re.sub(r"\(\?P<\w+>", "(?:", source), flags)
    return bare if bare.groups == 0 else None


def _after_word(text: str, whole: str) -> bool:
    """Whether some occurrence of ``whole`` in ``text`` follows a word character."""
    literal = re.escape(whole)
    return re.search(rf"{literal}(?<=[A-Za-z0-9_]{literal})", text) is not None


def _apart(wholes: list[str]) -> bool:
    """Whether no occurrence of one of ``wholes`` can overlap another occurrence of any."""
    for a in wholes:
        for b in wholes:
            if a != b and a in b:
                return False
            if any(a.endswith(b[:k]) for k in range(1, min(len(a), len(b)))):
                return False
    return True


def _literal_start(word: str) -> str:
    """What ``word`` (a regex) starts with literally: ``api`` of ``api[_-]?key``,
    ``credential`` of ``credentials?``."""
    literal = re.match(r"[^\\\[\](){}.*+?|^$]*", word)
    assert literal is not None
    start = literal.group()
    return start[:-1] if word[len(start) : len(start) + 1] in ("?", "*", "{") else start


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
# A word start: not after an ASCII letter, digit or underscore, or right after an escaped
# newline or tab inside a JSON string ("\\nmysql"); any other letter may precede it.
_START = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"
WORD_START = re.compile(_START)
"""Matches at a position where a token may start (see ``Rule.word_start``)."""
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def starts_word(text: str, at: int) -> bool:
    """Whether :data:`WORD_START` matches ``text`` at ``at``, without a regex call."""
    if at == 0 or text[at - 1] not in _WORD_CHARS:
        return True
    return at >= 2 and text[at - 2] == "\\" and text[at - 1] in "nrt"


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
            hints=("pass", "secret", "token", "api-key", "apikey", "cookie"),
        ),
        Rule(
            "user_password",
            r(r"-(?:u|-user)[\s=]*[^\s:\"'\\]{1,256}+:(?P<secret>[^\s\"'\\]{3,}+)"),
            label="secret",
            hints=("-u",),
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
            anchored=True,
            hints=("sshpass", "login"),
        ),
        Rule(
            "curl_cookie",
            r(_START + r"curl\b" + _ARGS + r"\s-b\s*" + _VALUE),
            label="secret",
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
            hints=("_key", "_token", "_secret", "_pass", "_pwd"),
            word_start=True,
        ),
        Rule(
            "secret_field",
            r(
                rf"(?i)(?:{_SECRET_WORDS}|{_LOCAL_WORDS})(?:[_-](?:key|value|hash|b64|base64))?\b"
                r"(?:\\?[\"']|%2[27]|\]|%5d)?\s*(?:[:=：]|%3[ad])\s*" + _VALUE_ANY_CASE
            ),
            label="secret",
            anchored=True,
            # Five searches rule most texts out; the anchors are only looked for after them.
            hints=("pass", "secret", "token", "credential", "key", *_LOCAL_WORDS.split("|")),
            anchors=_SECRET_HINTS,
            lead=_FIELD_WORDS,
        ),
    ]
