"""Parse terminal actions (tmux-style keystroke lists or command text) into key events."""

from __future__ import annotations

import json
import re
from typing import Any

from aw_lookahead.errors import UsageError

__all__ = [
    "KEY_ENTER",
    "KEY_EOF",
    "KEY_INTERRUPT",
    "KEY_KILL_LINE",
    "KEY_NOOP",
    "SUPPORTED_KEYS",
    "parse_keystrokes",
]

KEY_ENTER = "enter"
KEY_EOF = "eof"
KEY_INTERRUPT = "interrupt"
KEY_KILL_LINE = "kill-line"
KEY_NOOP = "noop"

SUPPORTED_KEYS: dict[str, str] = {
    "C-c": KEY_INTERRUPT,
    "C-d": KEY_EOF,
    "C-u": KEY_KILL_LINE,
    "C-l": KEY_NOOP,
    "C-m": KEY_ENTER,
    "C-j": KEY_ENTER,
    "Enter": KEY_ENTER,
    "KPEnter": KEY_ENTER,
}

# Anything shaped like a tmux key name is treated as a key, so a typo such as
# "C-x" is reported instead of being typed as text.
_KEY_NAME = re.compile(
    r"^(?:[CMS]-\S+|\^[A-Za-z]|Enter|KPEnter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right"
    r"|Home|End|PageUp|PageDown|PgUp|PgDn|NPage|PPage|Insert|Delete|IC|DC|F\d{1,2})$"
)
_DEFAULT_DURATION = 1.0

Key = tuple[str, str, float]
"""``(kind, text, duration)``: kind is ``"text"`` or one of the ``KEY_*`` names."""


def _normalise(name: str) -> str:
    if re.fullmatch(r"[Cc]-[A-Za-z]", name):
        return "C-" + name[2].lower()
    if re.fullmatch(r"\^[A-Za-z]", name):
        return "C-" + name[1].lower()
    return name


def _key(keystrokes: str, duration: float) -> Key:
    if _KEY_NAME.match(keystrokes):
        name = _normalise(keystrokes)
        if name not in SUPPORTED_KEYS:
            supported = ", ".join(SUPPORTED_KEYS)
            raise UsageError(
                f"unsupported control key {keystrokes!r}; the sandbox supports: {supported} "
                "(type text with a trailing newline to run a command)"
            )
        return SUPPORTED_KEYS[name], "", duration
    return "text", keystrokes, duration


def _item(obj: Any) -> Key:
    if not isinstance(obj, dict) or not isinstance(obj.get("keystrokes"), str):
        raise UsageError(
            f"each keystroke item must be an object with a string 'keystrokes', got {obj!r}"
        )
    duration = obj.get("duration", _DEFAULT_DURATION)
    if not isinstance(duration, int | float) or isinstance(duration, bool) or duration < 0:
        raise UsageError(f"'duration' must be a non-negative number of seconds, got {duration!r}")
    return _key(obj["keystrokes"], float(duration))


def parse_keystrokes(action: object) -> list[Key]:
    """Key events for ``action``: a keystroke list (or its JSON text), one item, or command text.

    Plain text that is not a keystroke list is one command: a newline is added
    when missing.
    """
    if isinstance(action, str):
        stripped = action.strip()
        if stripped.startswith(("[", "{")):
            try:
                decoded = json.loads(stripped)
            except json.JSONDecodeError:
                decoded = None
            if isinstance(decoded, list | dict):
                return parse_keystrokes(decoded)
        if _KEY_NAME.match(action):
            return [_key(action, _DEFAULT_DURATION)]
        text = action if action.endswith("\n") else action + "\n"
        return [("text", text, _DEFAULT_DURATION)]
    if isinstance(action, dict):
        return [_item(action)]
    if isinstance(action, list):
        return [_item(obj) for obj in action]
    raise UsageError(
        "a terminal action is a list of {'keystrokes': str, 'duration': float} or command "
        f"text, got {type(action).__name__}"
    )
