"""A wide text worked on as its ASCII ends and the rest: the same results as whole.

``_ascii_ends`` lowers and encodes a large text's ASCII ends apart from its
wide part, and ``splice_lowered`` splices a few matches of one repeated text by
slices instead of ``str.replace``; each must give exactly what the plain way
gives, and the redactor the same output with them as without.
"""

from __future__ import annotations

import random
import re

import pytest

from aw_lookahead import _ascii_ends, _bulk_redaction
from aw_lookahead._ascii_ends import ascii_ends, lowered, one_byte
from aw_lookahead._secret_rule import Rule
from aw_lookahead.redact import Redactor

_ASCII = "abcXYZ =?:\n-_"
_WIDE = "é\u03a3\u03c3\u03c2\u0130\u0131\u017f中ßǅ\U0001f600\ud800\u0391\u0392"
"""Wide letters, some of which lower-case to two or by their neighbours (written as
escapes: this file is part of the bench's real text, see docs/secrets.md)."""


def _texts(seed: int, count: int) -> list[str]:
    """ASCII, then a stretch with wide characters (sometimes none), then ASCII."""
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        size = rng.choice([0, 3, 70, 4100, 9000, 30000])
        cut = rng.randrange(size + 1)
        middle = "".join(rng.choice(_ASCII + _WIDE) for _ in range(rng.randrange(40)))
        texts.append(
            "".join(rng.choice(_ASCII) for _ in range(cut))
            + middle
            + "".join(rng.choice(_ASCII) for _ in range(size - cut))
        )
    return texts


def test_the_ends_found_are_the_longest_ascii_ends() -> None:
    checked = 0
    for text in _texts(1, 600):
        if text.isascii():
            continue
        head, tail = ascii_ends(text)
        assert text[:head].isascii()
        assert not text[head].isascii()
        assert text[tail:].isascii()
        assert not text[tail - 1].isascii()
        checked += 1
    assert checked > 300


def test_lower_case_and_one_byte_copy_are_those_of_the_whole_text() -> None:
    """Also where the end of the last text cut, tried first, is anywhere (another text's)."""
    cut = 0
    rng = random.Random(4)
    for text in _texts(2, 600):
        if rng.random() < 0.5:
            _ascii_ends._LAST_END[:] = rng.randrange(40000), rng.randrange(40000)
        assert lowered(text) == text.lower()
        grown = "Ünï" + text  # its end where the last one's was, moved: found so
        assert one_byte(grown) == grown.encode("ascii", "replace")
        assert one_byte(text) == text.encode("ascii", "replace")
        cut += _ascii_ends._pieces(text) is not None
    assert cut > 100  # the texts do get cut


def test_a_capital_sigma_is_lowered_with_the_letters_around_it() -> None:
    # Capital sigma lowers to a final sigma at a word's end, else to a plain one: cut
    # before "a", it would end one.
    text = "x" * 5000 + "\u0391\u03a3" + "a" * 5000
    assert lowered(text) == text.lower()
    assert lowered(text)[5001] == "\u03c3"


def test_few_and_many_matches_of_one_text_are_spliced_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rule = Rule("x", re.compile(r"(?i)pass=(?P<secret>\S+)"))
    rng = random.Random(3)

    def decide(text: str, m: re.Match[str]) -> str:
        return "[REDACTED_X_" + m.group("secret").upper() + "]"

    for _ in range(200):
        filler = ["Ünï", "密码", "pass", "=", "PASS=Ab", "Straße"]
        words = [rng.choice(filler) for _ in range(rng.randrange(1, 60))]
        text = " ".join([*words, "PASS=Ab"])
        lower = text.lower()
        matches = rule.matches(text, lower)
        narrow = lower.encode("ascii", "replace")
        done = []
        for least in (1, 10**9):  # str.replace, then slices
            monkeypatch.setattr(_bulk_redaction, "_REPLACE_FROM", least)
            edits: list[tuple[int, int, int]] = []
            made = _bulk_redaction.splice_lowered(text, lower, matches, decide, None, narrow, edits)
            done.append((made, edits))
        assert done[0] == done[1]
        (new, new_lower, new_narrow), _ = done[1]
        assert new_lower == new.lower()
        assert new_narrow == new.lower().encode("ascii", "replace")


def _wide_then_dense(seed: int) -> str:
    """Prose with wide letters and a few secrets, then many distinct secrets in ASCII."""
    rng = random.Random(seed)
    prose = [
        "Ünïcode — 密码 → prose ",
        "run `mysql -u root -phunter2x db` ",
        "--password s3cr3tValue ",
        "API_KEY=Ab3dEf6hIj ",
        "passwort: geheim123 ",
        "\u0391\u03a3 a ",
        "[REDACTED_SECRET_abc123] ",
    ]
    head = "".join(rng.choice(prose) for _ in range(rng.randrange(50, 400)))
    names = ["password", "token", "PASSWORD", "secret"]
    tail = "".join(
        f"{rng.choice(names)}={'v'}{i:07d}x{rng.choice(' ;,')}"
        for i in range(rng.randrange(300, 4000))
    )
    return head + tail if seed % 3 else tail + head


@pytest.mark.parametrize("seed", range(8))
def test_redacting_a_wide_text_by_its_ascii_ends_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    text = _wide_then_dense(seed)
    key = b"k" * 16
    fast = Redactor(key=key)
    by_ends = fast.text(text)
    monkeypatch.setattr(_ascii_ends, "_pieces", lambda text: None)
    monkeypatch.setattr(_bulk_redaction, "_REPLACE_FROM", 1)
    plain = Redactor(key=key)
    assert by_ends == plain.text(text)
    assert fast.over_cap == plain.over_cap
    assert "hunter2x" not in by_ends
    assert "v0000001x" not in by_ends


@pytest.mark.parametrize("seed", range(4))
def test_a_tail_led_by_one_name_changes_nothing(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Prose holding several secret names, then many distinct ``password=`` pairs: the tail
    split with its one name known (``_known_tail``) gives what the plain split gives."""
    from aw_lookahead import _folded_split

    rng = random.Random(seed)
    prose = "TOKEN: Abc, secret=Xyz1 api_key: Q2 passwort: geheim123 Ünïcode — " * 30
    tail = "".join(
        f"password={rng.choice(('', ' '))}v{i:07d}x{rng.choice((' ', chr(10)))}"
        for i in range(rng.randrange(2000, 6000))
    )
    text = prose + tail
    key = b"k" * 16
    taken: list[str] = []
    known_tail = _folded_split._known_tail
    monkeypatch.setattr(
        _folded_split,
        "_known_tail",
        lambda *a: taken.append(known_tail(*a)[1]) or known_tail(*a),
    )
    fast = Redactor(key=key)
    by_name = fast.text(text)
    assert taken == ["password"]
    monkeypatch.setattr(_folded_split, "_known_tail", lambda pattern, *_: (pattern, ""))
    plain = Redactor(key=key)
    assert by_name == plain.text(text)
    assert fast.over_cap == plain.over_cap
    assert "v0000001x" not in by_name


def test_the_lower_case_ascii_end_is_found_from_the_ascii_end_alone() -> None:
    from aw_lookahead import _folded_split

    checked = 0
    for text in _texts(5, 600):
        whole = one_byte(text).translate(_folded_split._UNFOLDED).rfind(b"X") + 1
        assert _folded_split._folded_end(text) == whole
        checked += _ascii_ends.ascii_end(text) is not None
    assert checked > 100
