"""tmux key names and the bytes a terminal sends for them (what readline reads).

An item of a keystroke action that is a key name (``C-a``, ``M-d``, ``^U``,
``Enter``, ``Up``, ``Home``, ``F5``...) is that key; tmux sends it as the bytes
below (a control byte, ``ESC`` + key for a meta key, a CSI sequence for
cursor keys, in the layout of tmux's own terminal, where Home is ``ESC[1~``).
"""

from __future__ import annotations

import re

__all__ = ["KEY_NAME", "key_sequence"]

KEY_NAME = re.compile(
    r"(?:[CMS]-\S+|\^[A-Za-z@\[\\\]^_?]|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End"
    r"|PageUp|PageDown|PgUp|PgDn|NPage|PPage|Insert|Delete|IC|DC|F\d{1,2}|KPEnter|Enter)"
)
_ESC = "\x1b"
_NAMED = {
    "Enter": "\r",
    "KPEnter": "\r",
    "Tab": "\t",
    "BTab": "\x1b[Z",
    "BSpace": "\x7f",
    "Escape": _ESC,
    "Space": " ",
    "Up": "\x1b[A",
    "Down": "\x1b[B",
    "Right": "\x1b[C",
    "Left": "\x1b[D",
    "Home": "\x1b[1~",
    "End": "\x1b[4~",
    "IC": "\x1b[2~",
    "Insert": "\x1b[2~",
    "DC": "\x1b[3~",
    "Delete": "\x1b[3~",
    "PageUp": "\x1b[5~",
    "PgUp": "\x1b[5~",
    "PPage": "\x1b[5~",
    "PageDown": "\x1b[6~",
    "PgDn": "\x1b[6~",
    "NPage": "\x1b[6~",
}
_CTRL_PUNCT = {"@": "\x00", " ": "\x00", "Space": "\x00", "[": _ESC, "\\": "\x1c"}
_CTRL_PUNCT.update({"]": "\x1d", "^": "\x1e", "_": "\x1f", "?": "\x7f"})


def key_sequence(name: str) -> str | None:
    """The bytes tmux sends for key ``name``, or ``None`` for a key this reader does not map."""
    if name in _NAMED:
        return _NAMED[name]
    if name.startswith("^") and len(name) == 2:
        name = "C-" + name[1]
    if name.startswith("M-") and len(name) > 2:
        inner = key_sequence(name[2:]) if len(name) > 3 else name[2]
        return _ESC + inner if inner is not None else None
    if name.startswith("C-") and len(name) > 2:
        rest = name[2:]
        if len(rest) == 1 and rest.isalpha():
            return chr(ord(rest.lower()) - 96)
        if rest in _CTRL_PUNCT:
            return _CTRL_PUNCT[rest]
        if rest.startswith("M-") and len(rest) == 3 and rest[2].isalpha():
            return _ESC + chr(ord(rest[2].lower()) - 96)
    return None
