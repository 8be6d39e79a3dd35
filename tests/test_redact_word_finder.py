"""Where words are in a large text (``WordFinder``, through ``HintWords.places``): every
shortcut gives the places ``str.find`` gives."""

from __future__ import annotations

import random
import re
from pathlib import Path

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
