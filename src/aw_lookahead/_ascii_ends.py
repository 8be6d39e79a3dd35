"""A wide text's lower case and one-byte copy, made from its ASCII ends apart.

CPython stores a ``str`` one, two or four bytes a character, by its widest
character. A large text with a few characters above U+00FF (prose such as
``README.md``) followed by a long ASCII stretch (a dump of tool output) is two
bytes a character throughout, and ``str.lower`` or
``str.encode("ascii", "replace")`` of it goes the slow way over every
character: 3.2 and 1.5 ms for such a MiB. A slice of it that holds only ASCII
is a one-byte string again, for which both are close to a copy. So where a
text's wide characters lie in one region, the stretches before and after it
are lowered (or encoded) on their own and the pieces joined: 0.8 and 0.5 ms,
finding the stretches included (the ASCII end is looked for where the last text's
was first: a rule that replaced values before it moved it by what it added).

What is guaranteed: :func:`lowered` is ``text.lower()`` and :func:`one_byte` is
``text.encode("ascii", "replace")`` for every text. Both act on each character
on its own (``str.lower`` but for a capital sigma, whose lower case depends on
the letters around it: a text holding one is lowered whole), so any cut gives
the same result; where the cut falls only decides how fast it is.
"""

from __future__ import annotations

__all__ = ["ascii_end", "ascii_ends", "lowered", "one_byte"]

_LEAST = 4096
"""Shorter texts, or ASCII ends shorter than this together, are worked on whole."""
_FIRST = 64
"""The first stretch looked at from each end; the next ones double."""


def ascii_ends(text: str) -> tuple[int, int]:
    """``(head, tail)``: ``text[:head]`` and ``text[tail:]`` are ASCII, the longest such
    (``text[head]`` and ``text[tail - 1]`` are not), for a text that is not ASCII.

    Stretches are looked at from each end, doubling, until one holds a character that is
    not ASCII, then halved down to it: each is a slice (a copy) read by ``str.isascii``,
    some two or three times the ASCII ends' length read in all."""
    return _ascii_prefix(text), len(text) - _ascii_prefix(text, backwards=True)


def _ascii_prefix(text: str, backwards: bool = False) -> int:
    """How many characters at the start (or, ``backwards``, the end) of ``text`` are ASCII,
    for a text that is not ASCII throughout."""
    size = len(text)

    def plain(lo: int, hi: int) -> bool:  # the stretch lo:hi from that end is ASCII
        return (text[lo:hi] if not backwards else text[size - hi : size - lo]).isascii()

    done, width = 0, _FIRST
    while done < size and plain(done, min(done + width, size)):
        done, width = min(done + width, size), 2 * width
    lo, hi = done, min(done + width, size)  # lo chars are ASCII, a wider one in lo:hi
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if plain(lo, middle):
            lo = middle
        else:
            hi = middle
    return lo


_LAST_END = [0, 0]
"""The length of the last text cut and where its ASCII end started (see :func:`_tail`)."""


def _tail(text: str, head: int) -> tuple[int, str]:
    """Where the longest ASCII end of ``text`` (not ASCII, ``head`` its ASCII start) starts,
    and that end.

    A rule that replaces values in a large text makes a new one, cut again here for its
    lower case, its one-byte copy or a rule's pass: where the last text cut ended in an
    ASCII stretch, that stretch is tried first, where it started then and moved by what
    the text grew by since (values replaced before it), each told by one character and
    one slice of the end (which the cut needs anyway) instead of stretches looked at from
    the end. Only how fast the cut is found depends on it: the cut is checked, and threads
    that share it only make each other's first try fail."""
    size, at = _LAST_END
    for start in (at + len(text) - size, at):
        if head < start < len(text) and not text[start - 1].isascii():
            tail = text[start:]
            if tail.isascii():
                return start, tail
    start = len(text) - _ascii_prefix(text, backwards=True)
    return start, text[start:]


def ascii_end(text: str) -> tuple[int, str] | None:
    """Where the longest ASCII end of ``text`` starts and that end (``text[at - 1]`` is
    not ASCII), for a large text that is not ASCII but ends in a long ASCII stretch; None
    for any other text."""
    pieces = _pieces(text)
    if pieces is None or not pieces[2]:
        return None
    return len(text) - len(pieces[2]), pieces[2]


def _pieces(text: str) -> list[str] | None:
    """``text`` cut at its ASCII ends, or None where it is better worked on whole (short,
    ASCII, or ends too short to pay for the cut)."""
    if len(text) < _LEAST or text.isascii():
        return None
    head = _ascii_prefix(text)
    at, tail = _tail(text, head)
    if head + len(tail) < _LEAST:
        return None
    _LAST_END[:] = len(text), at
    return [text[:head], text[head:at], tail]


def lowered(text: str) -> str:
    """``text.lower()``, with its ASCII ends lowered apart (see the module)."""
    pieces = _pieces(text) if "\u03a3" not in text else None
    if pieces is None:
        return text.lower()
    return "".join([piece.lower() for piece in pieces])


def one_byte(text: str) -> bytes:
    """``text.encode("ascii", "replace")`` (each character past ASCII a ``?``), with its
    ASCII ends encoded apart (see the module)."""
    pieces = _pieces(text)
    if pieces is None:
        return text.encode("ascii", "replace")
    return b"".join([piece.encode("ascii", "replace") for piece in pieces])
