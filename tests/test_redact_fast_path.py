"""The fast paths of redaction give what each rule's pattern alone gives.

A large text is redacted through shortcuts (hint words looked up once, anchors
where matches start, word branches, runs of one class, bulk reading of dense
matches, known secrets found one by one). The reference here is the slow way:
every rule runs its whole pattern over the whole text, with nothing but its
value check, its word-start check and its context words (which decide what is
a secret, not only where to look). Texts are seeded random mixes of planted
secrets (the corpus), this repository's own files, placeholders and
characters that lower-case or case-fold in unusual ways.
"""

from __future__ import annotations

import hmac
import random
import re
from pathlib import Path

import pytest

from aw_lookahead import _split_forms as split_forms
from aw_lookahead._bulk_redaction import BULK_CHARS, HintWords
from aw_lookahead._dense_split import split_values
from aw_lookahead._keyed_hash import KeyedSha256
from aw_lookahead._pattern_forms import _CASE_APART, aligned_lower, value_tails
from aw_lookahead._redact_rules import Rule, builtin_rules, starts_word
from aw_lookahead._value_splice import values_of
from aw_lookahead.redact import Redactor
from secret_corpus_support import corpus

_ROOT = Path(__file__).resolve().parent.parent
# Written as escapes: this file is part of the bench's real text (bench/redact.py), where a
# capital dotted I (which lower-cases to two characters) would change what the row measures.
_ODD = [
    "\u00e9", "\u5bc6", "\u017f", "\u212a", "\u0130", "\u03a3", "\u03c2", "\u0131",
    "\u00a0", "\u3000", "\uff1a", "\u01c5", "\u00df", "?",
]  # fmt: skip
_WORDS = [
    "password", "PASSWORD", "Secret", "token", "api_key", "sk-", "sk_live_", "rk_test_",
    "ya29.", "GOCSPX-", "?sig=", "&sig=", "sig=", "Bearer ", "authorization: ", "cookie: ",
    "AKIA", "aws ", "ghp_", "glpat-", "xoxb-", "hf_", "npm_", "dapi", "shpat_", "eyJ", "://u:",
    "@", "=", ": ", " ", "\n", "\\n", '"', "'", "[REDACTED_SECRET_0a1b2c]", "[", "]", "--",
    "mysql -p", "sshpass -p ", "curl -b ", "machine h login u password ", "-u ", "_KEY=",
    "AccountKey=", "пароль: ", "密码=",
]  # fmt: skip


def _alone(rule: Rule) -> Rule:
    """``rule`` with only what decides its matches: its pattern, value check and word-start
    check, and its hint words only where they are context (``near``). No anchors, word
    branches, runs of one class or bulk reading."""
    plain = Rule(
        rule.kind,
        rule.regex,
        rule.accept,
        rule.label,
        hints=rule.hints if rule.near else (),
        near=rule.near,
        word_start=rule.word_start,
    )
    object.__setattr__(plain, "runs", None)
    object.__setattr__(plain, "bare", ())
    return plain


def _repository_text() -> str:
    paths = sorted(_ROOT.glob("src/aw_lookahead/**/*.py")) + sorted(_ROOT.glob("docs/*.md"))
    return "".join(p.read_text(encoding="utf-8") for p in paths)


def _texts(seed: int, count: int) -> list[str]:
    """Large texts (past ``BULK_CHARS``): planted secrets, repository text, placeholders,
    odd characters and hint words, mixed at random."""
    rng = random.Random(seed)
    real = _repository_text()
    texts = []
    for i in range(count):
        lines = [line for _, line, _ in corpus()]
        parts: list[str] = []
        while sum(map(len, parts)) < BULK_CHARS + rng.randrange(8000):
            kind = rng.random()
            if kind < 0.3:
                parts.append(rng.choice(lines) + rng.choice(["\n", " ", ""]))
            elif kind < 0.5:
                at = rng.randrange(len(real) - 2000)
                parts.append(real[at : at + rng.randrange(50, 2000)])
            elif kind < 0.8:
                parts.append(rng.choice(_WORDS))
            else:
                pool = _ODD if i % 2 else "abcXYZ019_-./+="
                parts.append("".join(rng.choice(pool) for _ in range(rng.randrange(1, 50))))
        texts.append("".join(parts))
    return texts


def _reference_matches(rule: Rule, text: str) -> list[tuple[int, int]]:
    found = rule.regex.finditer(text)
    return [m.span() for m in found if not rule.word_start or starts_word(text, m.start())]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_rule_finds_in_a_large_text_what_its_pattern_finds(seed: int) -> None:
    rules = builtin_rules()
    vocabulary = frozenset(h for rule in rules for h in rule.hints)
    rng = random.Random(seed)
    dense = [_dense_distinct(rng, shape, 800) for shape in range(9)]  # anchors past the scan's
    dense = [text.replace("\u017fecret", "secret") for text in dense]  # see the test below
    for text in _texts(seed, 12) + dense:
        lower = text.lower()
        hints = HintWords(lower, lower.isascii(), vocabulary)
        for rule in rules:
            want = _reference_matches(rule, text)
            if not rule.near and not hints.any(rule.hints, near=False):
                assert want == [], (rule.kind, "skipped by its hints")
                continue
            got = rule.matches(text, lower, hints.has, hints.narrow)
            assert [m.span() for m in got] == want, rule.kind


@pytest.mark.parametrize("seed", [4, 5, 6])
def test_large_texts_are_redacted_as_by_each_rule_alone(seed: int) -> None:
    key = b"fast-path-key-16"
    texts = _texts(seed, 8)
    texts.append(texts[0] * 3)  # a text that repeats: known secrets met again, bulk reading
    # Prose, then a long dump with few letters, then more: words found by stretches.
    dump = "".join(f"password=v{i:07d}x " for i in range(seed * 2000, seed * 2000 + 6000))
    texts.append(_repository_text()[:30000] + texts[1] + dump + texts[2])
    for text in texts:
        fast = Redactor(key=key)
        slow = Redactor(key=key)
        slow._rules = [_alone(rule) for rule in slow._rules]
        assert fast.text(text) == slow.text(text)
        assert fast._known.learned_since(0) == slow._known.learned_since(0)


def test_a_hint_counts_outside_placeholders_as_where_it_occurs() -> None:
    """A hint outside placeholders is told from its occurrences; what that tells is
    what the text without placeholders tells, but for words made by joining text
    across a removed placeholder (which no pattern can match: they are not in the text)."""
    rng = random.Random(7)
    vocabulary = frozenset({"secret", "token", "key", "pass"})
    pieces = ["secret", "token", "ke", "y", "pa", "ss", "x" * 40, " ", "[", "]", "é"]
    pieces += ["[REDACTED_SECRET_0a1b2c]", "[REDACTED_TOKEN_many]", "[REDACTED_KEY]"]
    checked = 0
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 400)))
        lower = text.lower()
        inside = [m.span() for m in re.finditer(r"\[redacted_[a-z0-9_]+\]", lower)]
        hints = HintWords(lower, lower.isascii(), vocabulary)
        for hint in sorted(vocabulary):
            where = [m.start() for m in re.finditer(f"(?={hint})", lower)]
            outside = any(not any(a < at < b for a, b in inside) for at in where)
            stripped = re.sub(r"\[redacted_[a-z0-9_]+\]", "", lower)
            found = hints.any((hint,), near=False)
            assert found or not outside, (hint, text)  # an occurrence outside is never missed
            assert not found or hint in stripped, (hint, text)  # nor one made up
            checked += found != (hint in stripped)
    assert checked  # words joined across a removed placeholder came up, and did not count


def test_every_anchor_starts_with_one_of_its_roots() -> None:
    for rule in builtin_rules():
        if rule.anchored:
            words = rule.anchors or rule.hints
            assert all(any(w.startswith(r) for r in rule.roots) for w in words), rule.kind
            assert len(rule.roots) <= len(words)


def test_case_insensitive_matching_takes_no_other_character_for_an_anchor_character() -> None:
    """Where an anchored pattern matches, :func:`aligned_lower` holds the anchor, but for
    the characters of ``_CASE_APART``: case-insensitive matching takes a character ``c``
    for an anchor's character ``x`` only when ``c`` lower-cases to ``x`` (the capital
    dotted I: to ``i`` there), and only the capital dotted I lower-cases to two. The
    same holds for every letter of a pattern with a scan, and ``\\w``, ``\\s``, ``\\d``
    say the same of a character and its lower case (a wide text with none of
    ``_CASE_APART`` is scanned in lower case, and split without ``(?i)``)."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert [c for c in every if len(c.lower()) != 1] == ["\u0130"]
    anchored = [rule for rule in builtin_rules() if rule.anchored]
    chars = {c for rule in anchored for word in rule.anchors or rule.hints for c in word}
    for rule in anchored:
        if rule.scan is not None:
            chars |= set(re.sub(r"\(\?P<\w+>|\(\?i\)", "", rule.regex.pattern).lower())
    same = "".join(c for c in every if c not in _CASE_APART and c != "\u0130")
    for category in (r"\w", r"\s", r"\d"):  # the scan tests them on the lower case
        on_text = [m.start() for m in re.finditer(category, same)]
        assert on_text == [m.start() for m in re.finditer(category, same.lower())]
    apart = set()
    for x in sorted(chars):
        for c in re.findall("(?i)" + re.escape(x), every):
            if ("i" if c == "\u0130" else c.lower()) != x:
                apart.add(c)
    assert apart <= _CASE_APART


def test_a_capital_dotted_i_does_not_change_what_anchored_rules_find() -> None:
    rng = random.Random(8)
    words = [w for w in _WORDS if w.isascii()] + ["CREDENT\u0130AL=abc123", "\u0130", "\u0130"]
    words += ["SECRET_KEY=xyz987", "ToKeN: qwerty123", "Author\u0130zation: Bearer abcdefghijkl"]
    rules = builtin_rules()
    key = b"dotted-i-key-16b"
    for size in (300, 6000, 6000, 20000):
        for _ in range(4):
            lines = [line for _, line, _ in corpus()]
            parts = [rng.choice(words + lines) for _ in range(size // 12)]
            text = "".join(parts)
            if "\u0130" not in text:
                text += "\u0130"
            if any(c in text for c in _CASE_APART):
                continue
            lower = text.lower()
            assert len(lower) != len(text)
            assert aligned_lower(text) is not None
            for rule in rules:
                want = _reference_matches(rule, text)
                assert [m.span() for m in rule.matches(text, lower)] == want, rule.kind
            slow = Redactor(key=key)
            slow._rules = [_alone(rule) for rule in slow._rules]
            assert Redactor(key=key).text(text) == slow.text(text)


def _dense_distinct(rng: random.Random, shape: int, count: int) -> str:
    """``count`` secrets, most distinct (past the cap), in one of several dense shapes."""
    names = ["password", "token", "PASSWORD", "Password", "пароль", "secret", "\u017fecret"]
    names.append("password_ha\u017fh")  # a long s for an s: the whole pattern takes it
    aws = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"  # a value another rule learns first
    parts = [f"aws {aws}\n"] if shape == 8 else []
    ends = ["x", "Q", "_z"] + (["é"] if rng.random() < 0.5 else [])  # ASCII or wide text
    for i in range(count):
        value = f"v{i:07d}{rng.choice(ends)}"
        if shape in (0, 8, 12):
            parts.append(f"password={aws if shape == 8 and i == count // 2 else value} ")
        elif shape == 1:
            parts.append(f"{('password', 'token')[i % 2]}={value} ")
        elif shape == 2:
            parts.append(f"{('PASSWORD', 'Password')[i % 2]}={value} ")
        elif shape == 3:
            parts.append(f'"password": "{value}", ')
        elif shape == 4:
            parts.append(f"password={value if i % 2 else f'hunter{i % 16:02d}'} ")
        elif shape == 5:
            parts.append(f"password={value} " if i % 3 else f"password='{value}' ")
        elif shape == 9:  # command-line flags
            flag = rng.choice(["--password", "--db-password", "--Token", "--api-key", "--secret"])
            parts.append(flag + rng.choice([" ", "=", "  "]) + value + " ")
        elif shape == 10:  # bare, double- and single-quoted values mixed, several names
            name = rng.choice([n for n in names if "\u017f" not in n] + ["Secret", "token"])
            quote = rng.choice(["", "", '"', "'"])
            value = name[2:] if i % 97 == 5 and len(name) > 5 else value  # also in the name
            parts.append(f"{name}={quote}{value}{quote}{rng.choice([' ', chr(10)])}")
        elif shape in (11, 13):  # environment names: two rules find each secret
            env = rng.choice(["API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "MY_SECRET", "X_PWD"])
            lead = rng.choice(["", "", "", "", "", "x", "\\n"] if shape == 13 else [""])
            parts.append(f"{lead}{env}={value}\n" if i % 5 else f'{env}="{value}"\n')
        else:  # several names, separators and ends; 7: all in lower case
            name = rng.choice([n for n in names if shape == 6 or n == n.lower()])
            sep = rng.choice(["=", ": ", " = ", "：", "%3d"])
            parts.append(name + sep + value + rng.choice([" ", "\n", "; "]))
    text = "".join(parts)
    if shape == 12:  # prose with wider characters and a placeholder first, then dense secrets
        prose = (_ROOT / "README.md").read_text(encoding="utf-8")[:6000] + "\u2192\u2264"
        text = prose + " [REDACTED_SECRET_0a1b2c] " + text.replace("password", "Password", 7)
    at = rng.randrange(len(text))
    extra = ["", "", "", "é", "密", "\u0130", "\u017f", "\u03a3", "[REDACTED_SECRET_0a1b2c]"]
    return text[:at] + rng.choice(extra) + text[at:]


_MIXED = "API_KEY=v9999999x\nDB_PASSWORD=[REDACTED_SECRET_0a1b2c] "
"""Values of the dense rule that are placeholders (one made by an earlier rule), first."""


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_dense_distinct_secrets_are_redacted_as_match_by_match(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Dense secrets, most distinct (past the cap), in several names, cases, quotes and
    scripts, through one redactor after another: each text, what is learned, the count
    past the cap and the placeholders remembered are what deciding each distinct match
    text gives (``splice_lowered``: no split, no decisions per value). Secret names
    written with a long s are not recognised there (hints are looked for in the lower
    case), and must not be here either."""
    rng = random.Random(seed)
    few = " ".join(f"password=v{i:07d}{end}" for i in range(1100, 1120) for end in "xéq")
    texts = [few] + [_dense_distinct(rng, s, rng.choice([1500, 3000])) for s in range(13)]
    texts += [texts[1][: len(texts[1]) // 2] + texts[6], _dense_distinct(rng, 8, 300)]
    texts.append(_dense_distinct(rng, 11, 1500) + _dense_distinct(rng, 0, 1500))
    texts.append(_dense_distinct(rng, 13, 3000))  # some names after a word character
    texts += [_MIXED + _dense_distinct(rng, 0, 3000), _MIXED + _dense_distinct(rng, 4, 3000)]

    def run(texts: list[str], *, decided_per_match: bool, alone: bool) -> list[object]:
        redactor = Redactor(key=b"dense-key-16byte")
        if alone:
            redactor._rules = [_alone(rule) for rule in redactor._rules]
        if decided_per_match:
            monkeypatch.setattr(redactor, "_by_split", lambda *a: None)
            monkeypatch.setattr(redactor, "_by_values", lambda *a: None)
        outs = [redactor.text(text) for text in texts]
        return [outs, redactor.over_cap, redactor._known.learned_since(0), redactor._stand_ins]

    fast = run(texts, decided_per_match=False, alone=False)
    assert fast[1]  # past the cap
    assert any("REDACTED_AWS_SECRET" in out for out in fast[0])
    assert run(texts, decided_per_match=True, alone=False) == fast
    texts = [text.replace("\u017f", "s") for text in texts]
    fast = run(texts, decided_per_match=False, alone=False)
    assert run(texts, decided_per_match=True, alone=True) == fast


def test_value_groups_have_the_tails_and_heads_the_split_reads() -> None:
    """For each value group with a fixed tail, every match where it holds the value ends
    with that tail, and the head groups added for it hold the text before it, in the
    matches the pattern itself finds."""
    rng = random.Random(13)
    texts = _texts(14, 4) + [_dense_distinct(rng, shape, 300) for shape in range(8)]
    checked = 0
    for rule in builtin_rules():
        source, flags = rule.regex.pattern, rule.regex.flags
        tails = value_tails(source, flags, rule.groups)
        for name, tail in tails.items():
            body = re.sub(r"^\(\?[aiLmsux]+\)", "", source)
            heads = split_forms.with_heads(body, name)
            assert heads is not None, (rule.kind, name)
            prefix = source[: len(source) - len(body)]
            with_heads = re.compile(prefix + heads)
            for text in texts:
                want = list(rule.regex.finditer(text))
                got = list(with_heads.finditer(text))
                assert [m.span() for m in got] == [m.span() for m in want], rule.kind
                for m in got:
                    if m.group(name):
                        pieces = [g for k, g in m.groupdict().items() if k.startswith("aw_head")]
                        assert "".join(pieces) == text[m.start() : m.start(name)]
                        assert text[m.end(name) : m.end()] == tail
                        checked += 1
    assert checked > 1000
    assert value_tails(r"(?P<secret>a)+b", 0, ("secret",)) == {}
    assert value_tails(r"(?=(?P<secret>a))a", 0, ("secret",)) == {}
    assert value_tails(r"(?P<secret>a)\w", 0, ("secret",)) == {}


def test_keyed_digests_are_hmac_sha256() -> None:
    rng = random.Random(15)
    for size in (0, 16, 64, 65, 200):
        key = rng.randbytes(size)
        messages = [rng.randbytes(rng.randrange(300)) for _ in range(50)]
        want = [hmac.digest(key, m, "sha256") for m in messages]
        assert KeyedSha256(key).digests(messages) == want


def test_values_are_those_value_span_points_at() -> None:
    """Where a value group can be empty, or an earlier one can take part too, each value
    read in bulk (by match, by ``split``) is the one :meth:`Rule.value_span` points at,
    or the split is not taken."""
    regex = re.compile(r"(?i)(?:password|token)=(?P<secret>a*)(?P<dq>b[0-9]+)")
    rule = Rule("x", regex, hints=("password", "token"), anchored=True, lead=("password", "token"))
    for every in (0, 7):
        text = "".join(
            f"{('password', 'TOKEN')[i % 2]}={'a' if every and i % every == 3 else ''}"
            f"{('b', 'B')[i % 2]}{i} "
            for i in range(3000)
        )
        found = list(regex.finditer(text))
        want = [text[slice(*rule.value_span(m))] for m in found]
        assert values_of(rule, text, found)[0] == want
        scanned = list(re.compile(regex.pattern[4:]).finditer(text.lower()))  # as rule.scan
        assert values_of(rule, text, scanned)[0] == want  # read from the text, not its lower case
        optional = re.compile(r"(?i)(?:password|token)=(?P<secret>[a-z0-9]*)")
        one = Rule("y", optional, hints=("password",), anchored=True, lead=("password", "token"))
        with_empty = text.replace("=b", "= b").replace("=B", "= B") if every else text
        found_one = list(optional.finditer(with_empty))
        want_one = [with_empty[slice(*one.value_span(m))] for m in found_one]
        assert values_of(one, with_empty, found_one)[0] == want_one
        assert (split_values(one, with_empty, with_empty.lower(), lambda _: True) is None) == bool(
            every
        )
        lower = text.lower()
        split = split_values(rule, text, lower, lower.__contains__)
        assert (split is None) == bool(every)
        if split is not None:
            gaps, heads, values, tail = split
            assert values == want
            pieces = [
                p for i, v in enumerate(values) for p in (gaps[i], *(h[i] for h in heads), v, tail)
            ]
            assert "".join(pieces) + gaps[-1] == text
