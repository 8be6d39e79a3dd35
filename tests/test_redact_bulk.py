"""Redacting input dense with secrets, the cap on distinct secrets, known secrets, case folding.

The cost itself is measured in ``bench/redact.py``; these tests pin what the
output is: dense text reads as its parts redacted, past the cap secrets share
one placeholder and are not learned, known secrets are replaced as the
longest-first alternation of them would, and case-insensitive rules run over
the lower-cased text find what their ``(?i)`` patterns find.
"""

from __future__ import annotations

import hmac
import logging
import random
import re
from pathlib import Path

import pytest

from aw_lookahead.redact import DISTINCT_CAP, Redactor, builtin_rules
from aw_lookahead.redact import redactor as redactor_module
from aw_lookahead.redact.known import KnownSecrets
from aw_lookahead.trajectory import JsonlWriter
from secret_corpus_support import corpus

_ROOT = Path(__file__).resolve().parent.parent


def test_dense_input_replaces_every_secret() -> None:
    text = "password=hunter2x " * 5000 + "Authorization: Bearer abcdefghijklmnop\n" * 3000
    out = Redactor().text(text)
    assert "hunter2x" not in out
    assert "abcdefghijklmnop" not in out
    assert out.count("[REDACTED_SECRET_") == 8000
    assert len(set(re.findall(r"\[REDACTED_SECRET_\w+\]", out))) == 2


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


def test_placeholders_are_hmac_sha256_of_the_secret() -> None:
    rng = random.Random(15)
    for size in (0, 16, 64, 65, 200):
        key = rng.randbytes(size)
        secret = rng.randbytes(30).hex()
        digest = hmac.digest(key, secret.encode(), "sha256").hex()[:6]
        assert Redactor(key=key).placeholder("secret", secret) == f"[REDACTED_SECRET_{digest}]"


def test_a_placeholder_holding_a_later_match_text_is_not_rewritten_again() -> None:
    extra = {"word": r"tok9xyz|REDACTED"}  # the placeholder of the first holds the second
    out = Redactor(key=b"k" * 16, extra=extra).text("x tok9xyz y REDACTED " * 400)
    assert out.count("[REDACTED_WORD_") == 800
    assert "tok9xyz" not in out


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


def test_a_secret_with_a_placeholder_keeps_it_past_the_cap() -> None:
    text, _ = _distinct_secrets(random.Random(8), DISTINCT_CAP + 500)
    redactor = Redactor(key=b"k" * 16)
    known = redactor.text("token=known-secret-1\n")
    out = redactor.text(text + "token=known-secret-1\n")
    assert out.endswith(known)
    assert redactor.over_cap == 500


def test_below_the_cap_nothing_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    texts = [_distinct_secrets(rng, n)[0] for n in (10, 300, DISTINCT_CAP - 1, DISTINCT_CAP)]
    texts += [t[: rng.randrange(len(t))] for t in texts]
    capped = Redactor(key=b"k" * 16)
    with_cap = [(capped.text(t), capped._known.learned_since(0)) for t in texts]
    assert capped.over_cap == 0
    monkeypatch.setattr(redactor_module, "DISTINCT_CAP", 10**9)
    uncapped = Redactor(key=b"k" * 16)
    assert with_cap == [(uncapped.text(t), uncapped._known.learned_since(0)) for t in texts]


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


def test_known_secrets_are_replaced_as_the_longest_first_alternation() -> None:
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


def test_known_secrets_with_a_lone_surrogate() -> None:
    cases = (
        (["ab\ud800cdefgh", "abcdefgh12"], "x abcdefgh12 ab\ud800cdefgh y " * 300),
        (["abcdefgh12", "abcdefgh1234"], "x abcdefgh1234 \udfff abcdefgh12 y " * 300),
        (["ab\ud800cdefgh", "abcdefgh12"], "x abcdefgh12 y " * 300),
    )
    more = [f"other-{i}-secret" for i in range(6)]
    for secrets, text in [(s, t) for s, t in cases] + [(s + more, t) for s, t in cases]:
        known = KnownSecrets("[REDACTED_")
        known.learn((w, f"<{i}>") for i, w in enumerate(secrets))
        table = dict(known.learned_since(0))
        flat = re.compile("|".join(map(re.escape, sorted(table, key=len, reverse=True))))
        assert known.sub(text) == flat.sub(lambda m, t=table: t[m.group(0)], text)  # type: ignore[misc]
        assert known.sub(text) != text


def _mixed_texts(seed: int) -> list[str]:
    """Short random mixes of secret names, separators and values, in any case."""
    rng = random.Random(seed)
    pieces = [
        "password", "PassWord", "PASSWD", "secret_key", "Api-Key", "TOKEN", "credentials",
        "bearer", "BeArEr", "authorization", "Cookie", "AccountKey", "SharedAccessKey",
        "machine", "login", "Password", "default", "=", ": ", "%3A", "%3d", "\\\"", "'",
        '"', " ", "\n", "None", "NONE", "null", "x7Kq9", "abcdefghijklmnopq", "Zz-._~+/=",
        ";", ",", "]", "host.example", "\u0130", "\u017f", "\u212a", "é", "пароль", "密码",
    ]  # fmt: skip
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 14))) for _ in range(3000)]


def test_folded_rules_find_on_the_lower_case_what_their_patterns_find() -> None:
    """Only the capital dotted I lower-cases to more than one character; with it taken
    for ``i`` (as case-insensitive matching takes it), each folded rule finds over the
    lower-cased text the spans its ``(?i)`` pattern finds, where the texts hold none of
    the few characters (long s, Kelvin sign, …) that ``(?i)`` takes for an ASCII letter."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert [c for c in every if len(c.lower()) != 1] == ["\u0130"]
    folded = [rule for rule in builtin_rules() if rule.lowered is not None]
    assert {rule.kind for rule in folded} >= {"bearer", "secret_field", "netrc", "cookie"}
    for text in _mixed_texts(20):
        lower = redactor_module._lowered(text)
        assert len(lower) == len(text)
        for rule in folded:
            assert rule.lowered is not None
            got = [m.span() for m in rule.lowered.finditer(lower)]
            if "\u017f" in text or "\u212a" in text:
                continue
            assert got == [m.span() for m in rule.regex.finditer(text)], (rule.kind, text)


def test_every_match_holds_one_of_its_rules_hints() -> None:
    """A rule is not searched in a text holding none of its hints: each of its matches (in
    the corpus, this repository's code and docs) holds one, lower-cased."""
    texts = [line for _, line, _ in corpus()] + _mixed_texts(21)
    texts += [p.read_text(encoding="utf-8") for p in sorted(_ROOT.glob("docs/*.md"))]
    texts += ["PASSWORD%3Ahunter2x AUTHORIZATION=x1y2z3 Cookie : a=b DB_TOKEN = v1", "密码：v1x2"]
    checked = set()
    for rule in builtin_rules():
        if rule.near or not rule.hints:
            continue
        for text in texts:
            for match in rule.regex.finditer(text):
                whole = match.group(0).lower()
                assert any(hint in whole for hint in rule.hints), (rule.kind, whole)
                checked.add(rule.kind)
    assert len(checked) >= 25


def test_planted_secrets_in_a_large_text_are_all_replaced() -> None:
    """The corpus mixed into a text past the size of the decoded views (URL, base64: only
    for texts up to 64 KiB), between real text of this repository and odd characters."""
    rng = random.Random(30)
    real = "".join(p.read_text(encoding="utf-8") for p in sorted(_ROOT.glob("docs/*.md")))
    shapes = [s for s in corpus() if not s[0].startswith(("base64/", "urlencoded_symbols"))]
    parts: list[str] = []
    for _, line, _ in shapes:
        at = rng.randrange(len(real) - 3000)
        parts += [real[at : at + rng.randrange(50, 3000)], rng.choice(["\n", " ", "é", "\u0130"])]
        parts += [line, "\n"]
    text = "".join(parts)
    assert len(text) > 64 * 1024
    out = Redactor().text(text)
    left = [name for name, _, secret in shapes if secret in out]
    assert not left
