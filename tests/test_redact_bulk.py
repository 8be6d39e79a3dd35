"""Redacting input dense with secrets: each distinct secret decided once, nothing else changed.

The speed itself is measured in ``bench/redact.py``; these tests pin what makes
it: decisions per distinct match rather than per match, a splice equal to a
plain rewrite, scan patterns that find exactly what their rules find, and
hint words that placeholders cannot fake.
"""

from __future__ import annotations

import gc
import logging
import random
import re
from pathlib import Path

import pytest

from aw_lookahead import _bulk_redaction, _placeholders
from aw_lookahead._bulk_redaction import HintWords, splice
from aw_lookahead._redact_rules import Rule, builtin_rules
from aw_lookahead._seen_secrets import KnownSecrets
from aw_lookahead.redact import DISTINCT_CAP, Redactor
from aw_lookahead.trajectory import JsonlWriter


def test_dense_input_decides_each_distinct_secret_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []
    placeholder = Redactor.placeholder

    def counted(self: Redactor, kind: str, secret: str) -> str:
        calls.append((kind, secret))
        return placeholder(self, kind, secret)

    monkeypatch.setattr(Redactor, "placeholder", counted)
    text = "password=hunter2x " * 5000 + "Authorization: Bearer abcdefghijklmnop\n" * 3000
    out = Redactor().text(text)
    assert "hunter2x" not in out
    assert "abcdefghijklmnop" not in out
    assert out.count("[REDACTED_SECRET_") == 8000
    assert sorted(set(calls)) == sorted(calls)  # one placeholder per distinct secret
    assert len(calls) == 2


def test_dense_input_reads_as_its_parts_redacted() -> None:
    units = [
        "password=hunter2x ",
        "PASSWORD=Hunter2X ",
        "Bearer abcdefghijklmnop ",
        "xBearer abcdefghijklmnop ",  # not a token start: left as the rule leaves it
        "token: None ",
        "key=" + "sk-proj-" + "Ab3dEf6h" * 6 + " ",
    ]
    key = b"k" * 16
    for unit in units:
        assert Redactor(key=key).text(unit * 2000) == Redactor(key=key).text(unit) * 2000, unit


def _plain(text: str, matches: list[re.Match[str]], decide: object) -> str:
    assert callable(decide)
    out, done = [], 0
    for m in matches:
        out += [text[done : m.start()], decide(text, m)]
        done = m.end()
    return "".join([*out, text[done:]])


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("ab ab ab", r"ab"),  # one repeated match: one str.replace
        ("ab xab ab", r"(?<!x)ab"),  # an occurrence that is not a match
        ("aaaa aaa", r"(?<= )aa|^aa"),  # a text that overlaps itself
        ("ab cd ab cd ef", r"ab|cd|ef"),  # several distinct matches
        ("no match here", r"zz"),
    ],
)
def test_splice_equals_a_plain_rewrite(text: str, pattern: str) -> None:
    matches = list(re.finditer(pattern, text))
    seen: list[str] = []

    def decide(t: str, m: re.Match[str]) -> str:
        seen.append(m.group())
        return f"<{m.group().upper()}>"

    spliced = splice(text, matches, decide)
    assert sorted(seen) == sorted({m.group() for m in matches})  # once per distinct match text
    assert spliced == _plain(text, matches, decide)


def test_scan_patterns_find_what_their_rules_find() -> None:
    rng = random.Random(20)
    pieces = [
        "password", "PassWord", "PASSWD", "secret_key", "Api-Key", "TOKEN", "credentials",
        "bearer", "BeArEr", "authorization", "Cookie", "AccountKey", "SharedAccessKey",
        "machine", "login", "Password", "default", "=", ": ", "%3A", "%3d", "\\\"", "'",
        '"', " ", "\n", "None", "NONE", "null", "x7Kq9", "abcdefghijklmnopq", "Zz-._~+/=",
        ";", ",", "]", "host.example",
    ]  # fmt: skip
    scanned = [rule for rule in builtin_rules() if rule.scan is not None]
    assert {rule.kind for rule in scanned} >= {"bearer", "secret_field", "netrc"}
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        for rule in scanned:
            assert rule.scan is not None
            want = [m.span() for m in rule.regex.finditer(text)]
            assert [m.span() for m in rule.scan.finditer(text.lower())] == want, (rule.kind, text)


def test_placeholder_words_hint_only_context_rules() -> None:
    vocabulary = frozenset({"secret", "aws", "bearer"})
    before = "x" * 5000 + " bearer abcdefghijklmnop"
    hints = HintWords(before.lower(), True, vocabulary)
    assert not hints.any(("secret",), near=False)
    assert not hints.any(("aws", "secret"), near=True)
    stand_in = "[REDACTED_SECRET_0a1b2c]"
    after = before.replace("abcdefghijklmnop", stand_in)
    derived = hints.after(after.lower(), {stand_in})
    fresh = HintWords(after.lower(), True, vocabulary)
    for found in (derived, fresh):
        assert not found.any(("secret",), near=False)  # only inside a placeholder
        assert found.any(("aws", "secret"), near=True)  # context words count there
        assert found.any(("bearer",), near=False)


_DENSE_UNITS = [
    "password=hunter2x ", "PASSWORD=hunter2x ", "PassWord=hunter2x ", "Bearer abcdefghijklmnop ",
    "xBearer abcdefghijklmnop ", '{"userPassword": "hunter2x", "accessToken": "t0k3n-abc"} ',
    "apikey=zz9zz9 ", "api_key=zz9zz9 ", "credentials: x1y2z3 ", "token: None ", "é", "密",
    "sk-proj-" + "Ab3dEf6h" * 6 + " ", "password=hunter2xhunter2x ", "[", "]", "\n", "\\n",
    "secret_key=abc ", "aws ", "Ab3dEf6hAb3dEf6hAb3dEf6hAb3dEf6hAb3dEf6h ", "ghp_" + "a" * 36,
    "machine h login u password p4ssw0rd ", "mysql -uroot -pSECRET1 ", "x", "=", ": ",
]  # fmt: skip


def test_bulk_rewrites_exactly_what_match_by_match_rewrites(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(7)
    key = b"k" * 16
    texts = []
    for _ in range(60):
        pool = rng.sample(_DENSE_UNITS, rng.randint(1, 5))
        texts.append("".join(rng.choice(pool) for _ in range(rng.choice([300, 1500]))))
    fast = [Redactor(key=key).text(text) for text in texts]
    taken = 0
    bulk = Rule.bulk

    def counted(self: Rule, text: str, lower: str, has: object) -> object:
        nonlocal taken
        found = bulk(self, text, lower, has)  # type: ignore[arg-type]
        taken += found is not None and found[1]
        return found

    monkeypatch.setattr(Rule, "bulk", counted)
    assert [Redactor(key=key).text(text) for text in texts] == fast
    assert taken >= 20  # the str.replace path was taken, not only the match-by-match one
    monkeypatch.setattr(Rule, "bulk", lambda *args: None)
    assert [Redactor(key=key).text(text) for text in texts] == fast


def test_word_branches_find_what_the_scan_finds() -> None:
    rng = random.Random(21)
    pieces = [
        "password", "passwd", "secret", "token", "credentials", "credential", "apikey",
        "api_key", "api-key", "access_key", "private-key", "passwort", "mot de passe",
        "secret_key", "=", ": ", "%3a", "\\\"", "'", '"', " ", "\n", "none", "x7kq9",
        "abcdefghijk", "]", "_value", "-hash", "s",
    ]  # fmt: skip
    (rule,) = [rule for rule in builtin_rules() if rule.branches]
    assert rule.scan is not None
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        want = [m.span() for m in rule.scan.finditer(text)]
        found = rule._by_branches(text, text.__contains__)
        assert [m.span() for m in found] == want, text


def test_many_distinct_secrets_decided_at_once_read_as_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(3)
    forms = [
        "password={}x ", "Bearer tok{}abcdefghij ", '"secret": "s{}q" ', "é{} ",
        "sk-proj-{}" + "Ab3dEf6h" * 3 + " ", "[REDACTED_SECRET_{}] ", "PASSWORD={}X\n",
    ]  # fmt: skip
    key = b"k" * 16
    texts = [
        "".join(rng.choice(forms).format(f"{rng.randrange(10**6):06d}") for _ in range(n))
        for n in (300, 2000, 5000)
    ]
    at_once = []
    for text in texts:
        redactor = Redactor(key=key)
        at_once.append((redactor.text(text), redactor._known.learned_since(0)))
    monkeypatch.setattr(_bulk_redaction, "_DECIDE_ALL", 10**9)
    one_by_one = []
    for text in texts:
        redactor = Redactor(key=key)
        one_by_one.append((redactor.text(text), redactor._known.learned_since(0)))
    assert at_once == one_by_one


def test_a_large_batch_of_secrets_is_remembered_as_one_at_a_time() -> None:
    rng = random.Random(5)
    for _ in range(20):
        batch = [
            (f"s3cr3t-{rng.randrange(400):04d}", f"[REDACTED_SECRET_{rng.randrange(99)}]")
            for _ in range(rng.choice([10, 300, 900]))
        ]
        batch += [("short", "x"), ("onlyletters", "x"), ("[REDACTED_X_1]-long", "x")]
        rng.shuffle(batch)
        together, single = KnownSecrets("[REDACTED_"), KnownSecrets("[REDACTED_")
        together.learn([("already-known-1", "p")])
        single.learn([("already-known-1", "p")])
        learned = together.learn(batch)
        assert learned == any([single.learn([pair]) for pair in batch])
        text = " ".join(secret for secret, _ in batch) + " already-known-1"
        assert together.sub(text) == single.sub(text)
        assert [s for s, _ in together.learned_since(0)] == [s for s, _ in single.learned_since(0)]


def test_hint_words_in_wide_text_and_after_placeholders() -> None:
    vocabulary = frozenset({"bearer", "token", "secret", "sk-"})
    wide = "密é" * 3000 + " bearer abcdefghijklmnop sk-"
    hints = HintWords(wide.lower(), False, vocabulary)
    assert hints.has("bearer")
    assert hints.has("sk-")
    assert not hints.has("token")
    assert not hints.has("tok?n")
    stand_in = "[REDACTED_TOKEN_SECRET_0a1b2c]"  # brings t, n and c: "token", "secret"
    after = wide.replace("abcdefghijklmnop", stand_in).lower()
    many = {stand_in} | {f"[REDACTED_X_{i}]" for i in range(100)}  # past the few remembered
    for found in (hints.after(after, {stand_in}), hints.after(after, many)):
        assert found.has("token")  # in the text, inside the placeholder
        assert not found.any(("token",), near=False)
        assert not found.any(("secret",), near=False)
        assert found.any(("secret",), near=True)
        assert found.any(("bearer",), near=False)


def test_a_placeholder_holding_a_later_match_text_is_not_rewritten_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    key = b"k" * 16
    extra = {"word": r"tok9xyz|REDACTED"}  # the placeholder of the first holds the second
    text = "x tok9xyz y REDACTED " * 400
    fast = Redactor(key=key, extra=extra).text(text)
    monkeypatch.setattr(Rule, "bulk", lambda *args: None)
    assert fast == Redactor(key=key, extra=extra).text(text)
    assert fast.count("[REDACTED_WORD_") == 800


def _distinct_secrets(rng: random.Random, count: int) -> tuple[str, list[str]]:
    """A text of ``count`` distinct secrets in several written forms, and the secrets."""
    forms = ["password={} ", '"secret": "{}", ', "Authorization: Bearer {}\n", "token={}\n"]
    found = [f"v{i:07d}q{rng.randrange(10**6):06d}" for i in range(count)]
    return "".join(rng.choice(forms).format(s) for s in found), found


def test_secrets_past_the_cap_share_one_placeholder_and_are_not_learned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text, found = _distinct_secrets(random.Random(7), DISTINCT_CAP + 300)
    redactor = Redactor(key=b"k" * 16)
    with caplog.at_level(logging.WARNING, logger="aw_lookahead"):
        out = redactor.text(text)
    assert not [s for s in found if s in out]
    keyed = set(re.findall(r"\[REDACTED_SECRET_[0-9a-f]{6}\]", out))
    assert len(keyed) == DISTINCT_CAP
    assert out.count("[REDACTED_SECRET_many]") == redactor.over_cap == 300
    assert "300 more were replaced" in caplog.text
    learned = {s for s, _ in redactor._known.learned_since(0)}
    assert learned <= set(found[:DISTINCT_CAP])
    path = tmp_path / "records.jsonl"
    with JsonlWriter(path, redactor=Redactor()) as writer:
        writer.write({"output": text, "lines": text.splitlines()})
    on_disk = path.read_text()
    assert not [s for s in found if s in on_disk]


def test_past_the_cap_at_once_reads_as_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    text, _ = _distinct_secrets(random.Random(8), DISTINCT_CAP + 500)
    text = "token=known-secret-1\n" + text + "token=known-secret-1\n"
    at_once = Redactor(key=b"k" * 16)
    want = at_once.text(text)
    monkeypatch.setattr(_bulk_redaction, "_DECIDE_ALL", 10**9)
    one_by_one = Redactor(key=b"k" * 16)
    assert one_by_one.text(text) == want
    assert one_by_one.over_cap == at_once.over_cap >= 500
    assert one_by_one._known.learned_since(0) == at_once._known.learned_since(0)


def test_below_the_cap_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    texts = [_distinct_secrets(rng, n)[0] for n in (10, 300, DISTINCT_CAP - 1, DISTINCT_CAP)]
    texts += [t[: rng.randrange(len(t))] for t in texts]
    capped = Redactor(key=b"k" * 16)
    with_cap = [(capped.text(t), capped._known.learned_since(0)) for t in texts]
    assert capped.over_cap == 0
    monkeypatch.setattr(_placeholders, "DISTINCT_CAP", 10**9)
    uncapped = Redactor(key=b"k" * 16)
    assert with_cap == [(uncapped.text(t), uncapped._known.learned_since(0)) for t in texts]


def test_runs_of_a_class_are_found_as_the_regex_finds_them() -> None:
    rule = next(r for r in builtin_rules() if r.kind == "aws_secret")
    assert rule.runs is not None
    rng = random.Random(11)
    for _ in range(200):
        text = "".join(
            rng.choice(["A", "b", "9", "/", "+", "=", " ", "-", "é", "密", "\u212a", "?"])
            * rng.choice([1, 1, 5, 39, 40, 41])
            for _ in range(rng.randrange(1, 60))
        )
        want = [m.span() for m in rule.regex.finditer(text)]
        assert [m.span() for m in rule.matches(text, text.lower())] == want, text


def test_known_secrets_trie_matches_the_longest_first_alternation() -> None:
    """Both ways of replacing known secrets (the trie pattern, and in a large text with few
    secrets one ``str.find`` per secret) give what the longest-first alternation gives."""
    rng = random.Random(12)
    for i in range(300):
        size = rng.randint(8, 12)
        many = 30 if i % 3 else 80
        words = {"".join(rng.choice("ab[].é") for _ in range(size)) for _ in range(many)}
        words |= {w + "ab" for w in list(words)[:5]}  # words that are prefixes of others
        text = " ".join(rng.choice([*words, "ab[", "x"]) for _ in range(60))
        text += "".join(rng.choice("ab[].éx") for _ in range(300))
        known = KnownSecrets("[REDACTED_")
        known.learn((w, f"<{i}>") for i, w in enumerate(words))
        table = dict(known.learned_since(0))
        flat = re.compile("|".join(map(re.escape, sorted(table, key=len, reverse=True))))
        for sample in (text, text * 6):
            want = flat.sub(lambda m, table=table: table[m.group(0)], sample)  # type: ignore[misc]
            assert known.sub(sample) == want


def test_known_secrets_with_a_lone_surrogate_in_a_large_text() -> None:
    """A secret or a text holding a lone surrogate (which the automaton cannot read) is
    still replaced, and so is every other secret, as the longest-first alternation does;
    with a few secrets (``str.find`` each) and with more (the automaton)."""
    cases = (
        (["ab\ud800cdefgh", "abcdefgh12"], "x abcdefgh12 ab\ud800cdefgh y " * 300),
        (["abcdefgh12", "abcdefgh1234"], "x abcdefgh1234 \udfff abcdefgh12 y " * 300),
        (["ab\ud800cdefgh", "abcdefgh12"], "x abcdefgh12 y " * 300),
    )
    more = [f"other-{i}-secret" for i in range(6)]  # past the few found by str.find
    for secrets, text in [(s, t) for s, t in cases] + [(s + more, t) for s, t in cases]:
        known = KnownSecrets("[REDACTED_")
        known.learn((w, f"<{i}>") for i, w in enumerate(secrets))
        table = dict(known.learned_since(0))
        flat = re.compile("|".join(map(re.escape, sorted(table, key=len, reverse=True))))
        assert known.sub(text) == flat.sub(lambda m, t=table: t[m.group(0)], text)  # type: ignore[misc]
        assert known.sub(text) != text


def test_spliced_lower_case_is_the_lower_case_of_the_new_text() -> None:
    rng = random.Random(13)
    pattern = re.compile(r"(?i)pass=(?P<secret>\S+)")
    rule = Rule("x", pattern)
    spliced = replaced = 0
    for _ in range(200):
        text = " ".join(
            rng.choice(["PASS=Ab", "pass=x1", "paSS=ǅé", "Ünï", "密码", "ǅ", "—", "Straße"])
            for _ in range(rng.randrange(1, 80))
        )
        lower = text.lower()
        matches = rule.matches(text, lower)

        def decide(text: str, m: re.Match[str]) -> str:
            return "[REDACTED_X_" + m.group("secret").upper() + "]"

        narrow = lower.encode("ascii", "replace")
        new, new_lower, new_narrow = _bulk_redaction.splice_lowered(
            text, lower, matches, decide, None, narrow
        )
        assert new == splice(text, matches, decide)
        assert new_lower is None or new_lower == new.lower()
        assert new_narrow is None or new_narrow == new.lower().encode("ascii", "replace")
        assert new_lower is not None or new_narrow is None or new == text
        spliced += new_lower is not None and new != text
        replaced += new_lower is not None and len({m.group(0) for m in matches}) == 1
    assert spliced > 50
    assert replaced > 3  # one repeated match text: replaced in all three


def test_a_large_text_leaves_the_garbage_collector_as_it_found_it() -> None:
    text = "password=hunter2x " * 1000
    was_on = gc.isenabled()
    try:
        for on in (True, False):
            (gc.enable if on else gc.disable)()
            assert "hunter2x" not in Redactor().text(text)
            assert gc.isenabled() is on
    finally:
        (gc.enable if was_on else gc.disable)()
