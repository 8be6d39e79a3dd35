"""The split forms of dense rules (``_split_forms``) and the placeholder look-up in bulk.

A rule's value form must find each match where the rule does, its value where
``value_span`` points and the text before it; a dense mixed bare/quoted text
read by ``split`` must put back together into the text; a lower-case tail split
on its own gives what the whole split gives; an optional group written as a branch
matches as before; the values starting with a prefix
are those ``startswith`` tells, at the indexes it tells, and they are taken out
and put back in place.
"""

from __future__ import annotations

import random
import re

import pytest

from aw_lookahead._dense_split import _words_start, split_values
from aw_lookahead._pattern_forms import WORD_CHARS
from aw_lookahead._redact_rules import builtin_rules
from aw_lookahead._split_forms import VALUE, optional_as_branch, split_form, value_split_form
from aw_lookahead._value_splice import (
    apart_from,
    places_starting_with,
    starting_with,
    with_places,
    without_places,
)
from secret_corpus_support import corpus


def _mixed(rng: random.Random, n: int) -> str:
    forms = ('"{}"', "'{}'", "{}", '\\"{}\\"', '"{} x"', '"{}', "%22{}%22", "'{}")
    names = ("password", "Secret", "TOKEN", "api_key", "passwd")
    seps = ("=", ": ", " = ", "%3D", ":")
    return "".join(
        f"{rng.choice(names)}{rng.choice(seps)}{rng.choice(forms).format(f'v{i:05d}')}"
        f"{rng.choice((' ', ', ', chr(10), '', 'é'))}"
        for i in range(n)
    )


def test_dense_mixed_values_split_back_into_the_text() -> None:
    rule = next(r for r in builtin_rules() if r.kind == "secret_field")
    rng = random.Random(5)
    taken = 0
    for _ in range(12):
        text = _mixed(rng, 3000)
        lower = text.lower()
        split = split_values(rule, text, lower, lower.__contains__)
        if split is None:
            continue
        taken += 1
        gaps, heads, values, tails = split
        want = [text[slice(*rule.value_span(m))] for m in rule.regex.finditer(text)]
        assert values == want
        ends = [tails] * len(values) if isinstance(tails, str) else tails
        pieces = [
            p for i, v in enumerate(values) for p in (gaps[i], *(h[i] for h in heads), v, ends[i])
        ]
        assert "".join(pieces) + gaps[-1] == text
    assert taken >= 6


def test_values_starting_with_a_prefix() -> None:
    rng = random.Random(9)
    prefix = "[REDACTED_"
    for many in (0, 1, 5, 64, 65, 300):
        values = [f"v{i}" for i in range(2000)]
        for at in rng.sample(range(len(values)), many):
            values[at] = f"{prefix}X_{at:06x}]"
        values[7] = f"x{prefix}inside"  # the prefix, not at the start
        want = {v for v in values if v.startswith(prefix)}
        assert starting_with(values, prefix) == want
        with_nul = [*values[:3], f"a\0{prefix}b", *values[3:]]  # a NUL inside a value
        assert starting_with(with_nul, prefix) == want
    assert starting_with([f"{prefix}a"], prefix) == {f"{prefix}a"}
    assert starting_with([], prefix) == set()
    with pytest.raises(ValueError, match="NUL"):
        starting_with(["a"], "\0x")


def test_places_of_values_starting_with_a_prefix_taken_out_and_put_back() -> None:
    rng = random.Random(11)
    prefix = "[REDACTED_"
    for many in (0, 1, 2, 5, 64, 65):
        values = [f"v{i}" for i in range(3000)]
        for at in rng.sample(range(len(values)), many):
            values[at] = f"{prefix}X_{at % 3}]"  # some repeated
        values[0] = f"{prefix}first]" if many % 2 else "v0"  # the first value (no NUL before)
        values[-1] = f"{prefix}last]" if many % 2 else values[-1]  # and the last
        values[9] = f"x{prefix}inside"
        want = [i for i, v in enumerate(values) if v.startswith(prefix)]
        places = places_starting_with(values, prefix)
        after_first = sum(1 for i in want if i > 0)  # each found after a NUL
        assert places == (want if after_first <= 64 else None)
        rest, marks, at = apart_from(values, prefix)
        assert rest == [v for v in values if not v.startswith(prefix)]
        assert marks == {values[i] for i in want}
        assert at == places
        assert with_places(rest, want, values) == values
        assert without_places(values, want) == rest
    with_nul = ["a", f"b\0{prefix}c", f"{prefix}d"]
    assert places_starting_with(with_nul, prefix) is None  # a NUL inside a value
    assert apart_from(with_nul, prefix) == (["a", f"b\0{prefix}c"], {f"{prefix}d"}, None)
    assert places_starting_with([], prefix) == []
    assert with_places(["a", "b"], [0, 3], ["X", "a", "b", "Y"]) == ["X", "a", "b", "Y"]


def _fuzz(rng: random.Random) -> str:
    forms = ('"{}"', "'{}'", "{}", '\\"{}\\"', '"{} x"', '"{}', "%22{}%22", "'{}", "\"{}'", "'{} y")
    forms += ('"null"', "null", "None", "{}\\", '""', "''", '"', " ", "{}" + "w" * 300)
    names = ("password", "Secret", "TOKEN", "api_key", "passwd", "secret_key", "пароль")
    names += ("DB_PASSWORD", "X_API_KEY", "--password", "--api-key", "sshpass -p", "curl -b")
    seps = ("=", ": ", " = ", "%3D", ":", "：", '":', '" : ', "] =", " ")
    values = ("v{}", "a", "ab", "abc", "x y", "é{}", 'a"b', "a'b", "z" * 300)
    ends = (" ", ", ", "\n", "", "é", '"', "'")
    return "".join(
        rng.choice(names)
        + rng.choice(seps)
        + rng.choice(forms).format(rng.choice(values).format(i))
        + rng.choice(ends)
        for i in range(rng.randint(1, 8))
    )


def test_value_forms_find_each_match_and_value_where_the_rule_does() -> None:
    rules = [r for r in builtin_rules() if r.value_form]
    assert {r.kind for r in rules} >= {"secret_field", "secret_assignment"}
    rng = random.Random(11)
    texts = [_fuzz(rng) for _ in range(3000)]
    for rule in rules:
        pattern, flags = rule.regex.pattern, rule.regex.flags
        assert rule.value_form is not None
        assert pattern.endswith(rule.value_form.end)
        form = value_split_form(pattern, flags, rule.lead, rule.lead, rule.value_form)
        signs = None
        if rule.value_form.signs:  # one of them right before the value, but for these
            either = "|".join(map(re.escape, rule.value_form.signs))
            signs = re.compile(rf"(?:{either})\s*(?:\\?[\"']|%2[27])?\Z")
        assert form is not None, rule.kind
        found = 0
        for text in texts:
            want = [(m.start(), rule.value_span(m)) for m in rule.regex.finditer(text)]
            got = list(form.finditer(text))
            assert [(m.start(), m.span(VALUE)) for m in got] == want, (rule.kind, text)
            for m in got:
                assert m.group("aw_head0") == text[m.start() : m.start(VALUE)]
                if signs is not None:
                    assert signs.search(m.group("aw_head0").lower()), (rule.kind, m.group())
            found += len(got)
        assert found > 100, rule.kind


@pytest.mark.parametrize(
    "words", [("password", "secret", "token"), ("password",), ("secret", "password")]
)
def test_a_lower_case_tail_is_split_on_its_own_as_the_whole_text_is(
    words: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    from aw_lookahead import _folded_split

    rule = next(r for r in builtin_rules() if r.kind == "secret_field")
    source, flags, groups = rule.regex.pattern, rule.regex.flags, rule.groups
    forms = [split_form(source, flags, rule.lead, words, groups[:1], "secret")]
    forms.append(value_split_form(source, flags, rule.lead, words, rule.value_form))
    folded: list[str] = []
    without_case = _folded_split._without_case
    monkeypatch.setattr(
        _folded_split, "_without_case", lambda s: folded.append(s) or without_case(s)
    )
    rng = random.Random(21)
    tail = "".join(f"password=v{i:05d}x{rng.choice(('', ' ', chr(10)))} " for i in range(400))
    tail += "password=\"v x\" password='y z' "
    for pattern in forms:
        assert pattern is not None
        for head in ("", "Ünïcode PASSWORD=Abc ", "é", "Token: X\n", "password=abc", "secret=ÉtÉ"):
            for cut in (0, 1, 7, 11, 12, 40):
                text = head + tail[:cut] + tail[cut:].replace("x ", "x\n", 3)
                want = pattern.split(text)
                assert _folded_split.split_folded(pattern, text, words) == want, (head, cut)
        # a value running from the head into the tail, and a capital late in the text
        for text in ("Password=ÉÉ" + "abc" * 50 + " " + tail, tail + "Password=X " + tail):
            assert _folded_split.split_folded(pattern, text, words) == pattern.split(text)
    assert folded  # the tail was split on its own


def test_signs_followed_by_placeholders_tell_every_value_is_one() -> None:
    from aw_lookahead._dense_split import _signs_kept

    mark = "[redacted_"
    lines = "".join(f"api_key=[redacted_secret_{i:06x}]\n" for i in range(500))
    assert _signs_kept(lines, ("=", ":"), mark, 0)
    assert not _signs_kept(lines + "token: x\n", ("=", ":"), mark, 0)
    assert not _signs_kept(lines + "a=b\n", ("=",), mark, 0)
    assert _signs_kept("a=b\n" + lines, ("=",), mark, 4)  # before ``start``: not counted
    assert not _signs_kept(lines, (), mark, 0)
    assert not _signs_kept(lines, ("==",), mark, 0)  # a sign that overlaps itself
    assert not _signs_kept(lines, ("_",), "[redacted_", 0)  # a sign inside the mark
    assert not _signs_kept(lines, ("=",), '"x', 0)  # a mark an opening quote could start


@pytest.mark.parametrize(
    "last",
    ["", 'API_KEY="[REDACTED_SECRET_0a1b2c]"\n', "api_key = hunter2hunter\n", "token:x1y2z3\n"],
)
def test_placeholders_told_by_signs_as_by_the_search(
    last: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aw_lookahead import _dense_split
    from aw_lookahead.redact import Redactor

    text = "".join(f"API_KEY=v{i:07d}x\n" for i in range(3000)) + last
    key = b"signs-key-16byte"
    told: list[bool] = []
    signs_kept = _dense_split._signs_kept
    monkeypatch.setattr(
        _dense_split, "_signs_kept", lambda *a: told.append(signs_kept(*a)) or told[-1]
    )
    fast = Redactor(key=key).text(text)
    assert told
    assert told[0] is (last == "")
    monkeypatch.setattr(_dense_split, "_signs_kept", lambda *a: False)
    assert fast == Redactor(key=key).text(text)
    assert "v0002999x" not in fast
    assert "hunter2hunter" not in fast


@pytest.mark.parametrize("cut", [0, 5, 9000])
def test_a_tail_led_by_one_name_is_split_with_it_known(cut: int) -> None:
    """Several names in the prose, one in the lower-case tail: the tail is split with that
    name before the group of the text before the value; the name column and that group
    give the heads of the plain split, and the rest is the plain split's."""
    from aw_lookahead import _folded_split
    from aw_lookahead._split_forms import HEAD

    rule = next(r for r in builtin_rules() if r.kind == "secret_field")
    words = ("password", "secret", "token")
    pattern = split_form(
        rule.regex.pattern, rule.regex.flags, rule.lead, words, ("secret",), "secret"
    )
    assert pattern is not None
    prose = "Ünïcode SECRET=Abc token: Xyz " * 40 + "password=Q1 "
    tail = "".join(f"password={'' if i % 3 else ' '}v{i:05d}x " for i in range(3000))
    text = prose + tail[:cut] + " token=late " * (cut == 5) + tail[cut:]
    lower = text.lower()
    named: list[str] = []
    got = _folded_split.split_folded(pattern, text, words, words, lower.rfind, named)
    want = pattern.split(text)
    step, head = pattern.groups + 1, pattern.groupindex[f"{HEAD}0"]
    assert bool(named) == (cut != 5)  # a second name in the tail: split as it is
    if named:
        assert len(named) == len(want) // step
        assert list(map(str.__add__, named, got[head::step])) == want[head::step]
        got[head::step] = want[head::step]
        assert named.count("password") > 2900
    assert got == want


def test_matches_before_the_tail_tried_at_their_words_are_the_scans() -> None:
    """``_before`` (the pattern tried where a leading word's text is) gives the matches
    ``finditer`` gives before a place, in any case, overlapping words and at the edges."""
    from aw_lookahead import _folded_split

    rule = next(r for r in builtin_rules() if r.kind == "secret_field")
    words = ("password", "passwd", "secret", "token", "api[_-]?key")
    starts = ("password", "passwd", "secret", "token", "api")
    pattern = split_form(
        rule.regex.pattern, rule.regex.flags, rule.lead, words, ("secret",), "secret"
    )
    assert pattern is not None
    rng = random.Random(31)
    pieces = ["PassWord=Ab1 ", "passwordpassword: x ", "SECRET:\"a b\" ", "Ünï ", "token ",
              "api-key=Q ", "APIKEY=z ", "passwd", "=v1x ", "secretsecret= y", "é"]  # fmt: skip
    for _ in range(300):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40)))
        start = rng.randrange(len(text) + 1)
        want = [m.span() for m in pattern.finditer(text) if m.start() < start]
        got = [m.span() for m in _folded_split._before(pattern, text, start, starts)]
        assert got == want, (text, start)
        assert [m.span() for m in _folded_split._before(pattern, text, start, ())] == want


def test_optional_groups_written_as_branches_only_where_greedy_and_not_captured() -> None:
    assert optional_as_branch("(?:a|b)?c") == "(?:a|b|)c"
    assert optional_as_branch("(?:(?:a)?b)?") == "(?:(?:a|)b|)"
    assert optional_as_branch(r"x(?:[)?](?:\)?)?)?") == r"x(?:[)?](?:\)?|)|)"
    for kept in ("(?:a)??", "(?:a)?+", "(?P<n>a)?", "(?=a)?", "(?:a)*", r"\(?:a)", "[(?:a)?]"):
        assert optional_as_branch(kept) == kept


def test_rule_patterns_with_optional_groups_as_branches_match_as_before() -> None:
    rng = random.Random(11)
    lines = [line for _, line, _ in corpus()]
    text = "\n".join([*lines, _mixed(rng, 400), "password=null token='' secret=\\\"x\\\""])
    texts = (text, text.lower(), text.upper())
    rewritten = 0
    for rule in builtin_rules():
        source = optional_as_branch(rule.regex.pattern)
        rewritten += source != rule.regex.pattern
        other = re.compile(source, rule.regex.flags)
        for each in texts:
            want = [(m.span(), m.groups()) for m in rule.regex.finditer(each)]
            assert [(m.span(), m.groups()) for m in other.finditer(each)] == want, rule.kind
    assert rewritten >= 3


@pytest.mark.parametrize("gap", ["\n", " ", "", "x", "a\n", "\n_"])
@pytest.mark.parametrize("first", ["", " ", "z"])
def test_every_match_follows_no_word_character_where_one_gap_repeats(first: str, gap: str) -> None:
    """One gap repeated between all matches is read once: the same answer as gap by gap."""
    for inner in ([gap] * 4, [gap] * 3 + [" "], [" "] + [gap] * 3):
        gaps = [first, *inner, "end"]
        each = [not g or g[-1] not in WORD_CHARS for g in gaps[:-1]]
        expected = all(each[1:]) and "" not in inner and each[0]
        assert _words_start(gaps) is expected
