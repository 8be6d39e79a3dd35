"""Where words are in a large text (``WordFinder``, through ``HintWords.places``): every
shortcut gives the places ``str.find`` gives."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from aw_lookahead import _aho_corasick, _hint_words
from aw_lookahead._bulk_redaction import HintWords
from aw_lookahead._word_finder import WordFinder


def _places(hints: HintWords, word: str) -> list[int]:
    at, find = hints.places(word)
    found = []
    while at >= 0:
        found.append(at)
        at = find(at + 1)
    return found


def _want(text: str, word: str) -> list[int]:
    return [m.start() for m in re.finditer(f"(?={re.escape(word)})", text)]


def test_places_of_words_are_where_find_finds_them() -> None:
    """Wide words read from where wide characters are (few, or past the limit), ASCII words
    in the one-byte copy, question marks of the text and words at its very start."""
    rng = random.Random(3)
    words = ["密码", "пароль", "contraseña", "é", "a?b", "?", "pass", "sk-", "zz", "ña"]
    for few in (True, False):
        pool = ["密码", "пароль", "contraseña", "a?b", "?", "pass ", "sk-", "é", "x" * 50]
        pool += [] if few else ["é?" * 3000]
        text = "".join(rng.choice(pool) for _ in range(3000)).lower()
        hints = HintWords(text, text.isascii(), frozenset(words))
        for word in words:
            assert _places(hints, word) == _want(text, word), word
        assert (hints._finder._wide_index() is not None) == few


def test_words_are_found_by_stretches_where_stretches_differ() -> None:
    """Prose, then a long dump with few letters: words are looked for in the stretches that
    hold their characters, also across a stretch's edge and at the very end."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    rng = random.Random(5)
    words = ["token", "eyj", "sk-", "password=v", "d=v0", "x password", "zq", "private key"]
    for wide in (False, True):
        prose = readme[:20000] if wide else readme[:20000].encode("ascii", "ignore").decode()
        dump = "".join(f"password=v{i:07d}x " for i in range(40000))
        cut = rng.randrange(len(dump))
        text = (prose + dump[:cut] + " sk-token eyj " + dump[cut:] + "zq").lower()
        hints = HintWords(text, text.isascii(), frozenset(words))
        for word in words:
            assert _places(hints, word) == _want(text, word), word
        assert not hints._finder.uniform  # read by stretches
        for at in range(16384 - 12, 16384 + 2):  # a word across a stretch's edge
            edge = text[:at] + "eyjzq" + text[at:]
            assert _places(HintWords(edge, edge.isascii(), frozenset()), "eyjzq") == [at]
        at = 16384 * 20 - 1  # in the dump, its letters split between two stretches
        edge = text[:at] + "kq" + text[at + 2 :]
        assert _places(HintWords(edge, edge.isascii(), frozenset()), "kq") == [at]
    uniform = WordFinder(readme * 40, False)
    assert uniform.finder("token")(0) == (readme * 40).find("token")
    assert uniform.uniform  # the same letters throughout: not read by stretches


def test_places_learned_at_once_are_where_find_finds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many words found in one pass (``learn_places``) are where ``str.find`` finds them,
    overlapping ones and across the edges of the pass's stretches too, in ASCII and in wide
    text; a word found only inside placeholders is not outside them. A text dense with the
    words finds the others at once, those alone (the text after it does not try the dense
    ones again); one dense with all of them gives up, and the text after it too."""
    monkeypatch.setattr(_hint_words, "_AT_ONCE", 4)  # these few words, found at once too
    rng = random.Random(11)
    words = ("aa", "aab", "aaa", "pass", "sk-", "token", "ab", "zz", "kk", "-a", "secret", "a?b")
    for size, dense, wide in ((70000, False, False), (70000, False, True), (70000, True, False)):
        unit = ["aab ", "x" * 90, "pass", "sk-token", "a", "[redacted_secret_0a1b2c] ", "aaaa"]
        unit += (["aab"] * 40 if dense else []) + (["é"] if wide else [])
        text = "".join(rng.choice(unit) for _ in range(size // (4 if dense else 16)))
        for at in (16383, 32766, 49150):
            text = text[:at] + "token" + text[at:]
        hints = HintWords(text, text.isascii(), frozenset(words))
        hints.learn_places(words)
        assert hints._all
        assert ("aab" in hints._dense) == dense
        assert ("aab" in hints._all) == (not dense)
        assert hints.after(text, [])._dense == hints._dense
        assert not hints.after(text, [])._gave_up
        for word in words:
            assert _places(hints, word) == _want(text, word), word
            assert hints.has(word) == (word in text), word
        stripped = re.sub(r"\[redacted_[a-z0-9_]+\]", "", text)
        for word in ("secret", "token", "pass"):
            assert hints.outside(word) == (word in stripped), word
    dense_only = "aab pass token secret " * 4000
    hints = HintWords(dense_only, True, frozenset(words))
    hints.learn_places(words)
    assert not hints._all
    assert hints.after(dense_only, [])._gave_up
    assert _places(hints, "aab") == _want(dense_only, "aab")
    inside = ("x" * 5000 + "[redacted_secret_0a1b2c] pass token sk-a aab ") * 4
    hints = HintWords(inside, True, frozenset(words))
    hints.learn_places(words)
    assert hints._all
    assert hints.has("secret")
    assert not hints.outside("secret")


@pytest.mark.parametrize("each", [0, 4, 10**9])  # edit by edit, as chosen, place by place
def test_places_moved_through_rewrites_are_where_find_finds_them(
    monkeypatch: pytest.MonkeyPatch, each: int
) -> None:
    """After values are replaced (a few edits), the places found at once in the text before
    are moved, and the words a replacement brings or cuts are found around it: every place
    is where ``str.find`` finds it in the new text, through several rewrites in a row, with
    replacements that hold words, join words across their edges, or remove text."""
    monkeypatch.setattr(_hint_words, "_AT_ONCE", 4)
    monkeypatch.setattr(_aho_corasick, "_EDITS_PER_PLACE", each)
    rng = random.Random(5)
    words = ("pass", "secret", "token", "sk-ant-", "key", "redacted", "xyz", "_key")
    unit = ["pass ", "x" * 40, "token=", "sk-ant-", "abc_key ", "é", "secret", "y" * 20]
    text = "".join(rng.choice(unit) for _ in range(6000))
    hints = HintWords(text.lower(), text.isascii(), frozenset(words))
    hints.learn_places(words)
    assert hints._all
    for many in (20, 20, 200, 60):
        cuts = rng.sample(range(len(text)), many)
        cuts += [text.find("token", c) + 5 for c in cuts[:8]]  # right after a word, or at -1+5
        cuts += [text.find("pass", c) - 3 for c in cuts[:8]]  # edits that end inside one
        cuts = sorted(c for c in set(cuts) if 0 <= c < len(text))
        spans = [(a, a + rng.randint(1, 12)) for a in cuts[::2]]
        spans = [s for s, t in zip(spans, [*spans[1:], (len(text), 0)], strict=True) if s[1] < t[0]]
        pieces, edits, done = [], [], 0
        for start, end in spans:
            new = rng.choice(["[REDACTED_SECRET_0a1b2c]", "", "ss", "tok", "en", "_KEY"])
            pieces += [text[done:start], new]
            edits.append((start, end, len(new)))
            done = end
        text = "".join([*pieces, text[done:]])
        hints = hints.after(text.lower(), [], None, edits)
        assert hints._chains
        for word in words:
            assert _places(hints, word) == _want(text.lower(), word), word


def _edited(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces, last = [], 0
    for start, end, new in edits:
        pieces += [text[last:start], new]
        last = end
    return "".join([*pieces, text[last:]])


@pytest.mark.parametrize("shift", [0, 9000, -9000, 17000])
def test_stretches_carried_through_edits_find_what_find_finds(shift: int) -> None:
    """After a few edits, the stretches of the text before are carried (widened by their
    neighbours and, about the edits, by the bytes put in) unless something moved by a
    stretch or more: a word put in by an edit, or moved into another stretch, is found."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    stretch = 16384
    dump = "".join(f"password=v{i:07d}x " for i in range(40000))
    text = (readme[:20000] + dump).lower()
    kq = 6 * stretch - 5000 if shift >= 0 else 6 * stretch + 5000
    text = text[:kq] + "kq" + text[kq + 2 :]  # its letters are nowhere else in the dump
    text = text[:50] + "\x01\x02" + text[52:]  # bytes in the first stretch only
    mark = "[redacted_secret_0a1b2c]"
    edits = [(120, 125, mark), (30000, 30009, mark)]
    if shift > 0:
        edits.append((40000, 40001, "y" * (shift + 1)))
    elif shift < 0:
        edits.append((40000, 40000 - shift, ""))
    edits += [(kq + 8000, kq + 8010, mark)]
    ahead = sum(len(put) - (end - start) for start, end, put in edits)
    edge = 10 * stretch - ahead  # put in at the very start of a stretch of the new text
    edits += [(edge, edge + 9, mark), (len(text) - 30, len(text) - 21, mark)]
    new = _edited(text, edits)
    across = new[10 * stretch - 2 : 10 * stretch + 4]  # from the stretch before into it
    assert across.endswith("[red")
    hints = HintWords(text, text.isascii(), frozenset())
    assert hints._finder._stretch_pairs() is not None
    moved = [(start, end, len(put)) for start, end, put in edits]
    after = hints.after(new, {mark, "y" * (shift + 1)}, None, moved)
    assert after._finder._pairs_made is (abs(shift) < stretch)  # carried, not read again
    words = (
        "kq",
        "[redacted_",
        "_0a1b2c]",
        "c]pass",
        "yyy",
        "password=v0012345x",
        "zq",
        across,
        "\x01\x02",
    )
    for word in words:
        assert _places(after, word) == _want(new, word), word
