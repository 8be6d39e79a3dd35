"""A pattern whose every match starts with an ASCII capital, tried only at the capitals of a
large text whose end has none (``capital_matches``): the matches ``finditer`` gives."""

from __future__ import annotations

import random
import re

import pytest

from aw_lookahead._pattern_forms import capital_first, capital_matches
from aw_lookahead._redact_rules import builtin_rules


def _spans(found: list[re.Match[str]] | None) -> list[tuple[int, int]] | None:
    return None if found is None else [m.span() for m in found]


def test_patterns_that_start_with_a_capital() -> None:
    kinds = [r.kind for r in builtin_rules() if capital_first(r.regex.pattern, r.regex.flags)]
    assert kinds == ["secret_assignment"]
    assert capital_first("[A-Z][a-z]+", 0)
    for source, flags in (("[A-Za-z]x", 0), ("[A-Z]x", re.IGNORECASE), ("(?i)[A-Z]x", 0)):
        assert not capital_first(source, flags), source
    for source in ("[A-Z]?x", "[A-Y]x", "[^A-Z]x", "A|[A-Z]", "(?:[A-Z]|a)x", "[A-Z0-9]x"):
        assert not capital_first(source, 0), source


@pytest.mark.parametrize("seed", range(6))
def test_tried_at_the_capitals_as_finditer_finds(seed: int) -> None:
    rule = next(r for r in builtin_rules() if r.kind == "secret_assignment")
    rng = random.Random(seed)
    bits = ["The ", "API_KEY=v1 ", "A_B_TOKEN = 'x y' ", 'X_PASSWORD="q"Y_PWD=abc ', "é "]
    bits += ["AB_KEY=XY_KEY=zzz ", "_1A_SECRET=null ", "a_key=lower ", "\n", "QQ_PASS=", "%22"]
    prose = "".join(rng.choice(bits) for _ in range(rng.choice((50, 400))))
    dump = "".join(f"password=v{i:07d}x " for i in range(rng.choice((600, 3000))))
    if seed % 2:  # a capital in the dump, before its last characters: it is read there too
        dump = dump[: len(dump) // 2] + " MID_KEY=abc " + dump[len(dump) // 2 :]
    text = prose + dump + ("" if seed % 3 else "TAIL_KEY=abc")
    at = rule._at
    found = capital_matches(rule.regex, text, at, 1 << 20)
    if seed % 3 == 0:
        assert found is None  # a capital in the last characters: scanned as it is
        return
    assert _spans(found) == [m.span() for m in rule.regex.finditer(text)]
    wanted = list(rule.regex.finditer(text))
    if len(wanted) > 1:
        assert capital_matches(rule.regex, text, at, len(wanted)) is None  # too many found


def test_not_tried_at_capitals_where_they_are_many_or_the_text_short() -> None:
    rule = next(r for r in builtin_rules() if r.kind == "secret_assignment")
    many = "A " * 5000 + "x" * 9000
    assert capital_matches(rule.regex, many, rule._at, 256) is None
    assert capital_matches(rule.regex, "API_KEY=abc " + "x" * 100, rule._at, 256) is None
    lower = re.compile("[a-z]+_key=\\w+")
    assert capital_matches(lower, "API_KEY=abc " + "x" * 9000, rule._at, 256) is None
