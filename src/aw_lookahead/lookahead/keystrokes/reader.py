"""Keystrokes as bash's readline reads them: the lines an interactive bash runs.

Terminal actions are tmux-style keystroke lists (an item that is a key name, ``C-a``,
``Enter``, ``M-d``, ``Up``, is that key; any other item is typed literally, raw control
bytes and ESC sequences included). :class:`LineEditor` replays them with readline's
default emacs bindings: motion (``C-a``, ``C-e``, ``C-b``, ``C-f``, ``M-b``, ``M-f``,
Home, End, arrows), deletion (``C-d`` on a non-empty line, ``C-h``/BSpace, Delete,
``C-k``, ``C-u``, ``C-w``, ``M-d``, ``M-DEL``), the kill ring (``C-y``, ``M-y``),
``C-t``, case changes, ``C-v``, bracketed paste, history (``Up``/``C-p``,
``Down``/``C-n``, ``M-<``, ``M->``, ``M-.``), ``M-#``, and on Enter bash's history
expansion and ``fc -s`` (:mod:`.keystrokes.history`). The history is what earlier
actions of the trajectory ran; an unfinished line carries over to the next action.

Keys whose result depends on what this reader cannot see (``Tab`` completion, ``C-r``
search, ``C-x`` prefixes, undo, numeric arguments, unknown ESC sequences, history beyond
what the trajectory shows) make the line unreadable: :attr:`Reduced.unknown` says why,
and the caller counts it as possibly destructive.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .history import HistoryError, expand_history, fc_line
from .keynames import KEY_NAME, key_sequence

__all__ = ["KEY_NAME", "LineEditor", "Reduced", "key_sequence", "reduce_keys"]


@dataclass
class Reduced:
    """What keys do at a bash prompt: ``lines`` run (after history expansion), ``discarded``
    lines abandoned with ``C-c``, the ``pending`` line left unfinished, and why the keys
    cannot be read as lines (``unknown``), if they cannot."""

    lines: list[str] = field(default_factory=list)
    discarded: list[str] = field(default_factory=list)
    pending: str = ""
    unknown: str | None = None

    def texts(self) -> list[str]:
        """Every text to judge: the lines run (one text, as bash reads a command that spans
        lines), each abandoned line, the unfinished line alone and as their continuation."""
        ran = "\n".join(self.lines)
        out = [ran] if self.lines else []
        out += self.discarded
        if self.pending.strip():
            out += [self.pending, f"{ran}\n{self.pending}"] if self.lines else [self.pending]
        return out


_ESC = "\x1b"
_INPUTRC_KEYS = frozenset({"1~", "4~", "3~", "2~", "1;5C", "5C", "1;5D", "5D"})
_WORD = re.compile(r"[A-Za-z0-9]")
_CSI = re.compile(r"\x1b(?:\[([0-9;]*)([A-Za-z~])|O([A-Za-z]))")


class LineEditor:
    """readline's emacs mode over one bash prompt, with its history (see the module doc)."""

    def __init__(
        self, *, expand: bool = True, ignore_space: bool = False, inputrc: bool = True
    ) -> None:
        self.expand = expand
        self.ignore_space = ignore_space
        self.inputrc = inputrc
        self.history: list[str] = []
        self.buf: list[str] = []
        self.pos = 0
        self.kills: list[str] = []
        self.quoted = False
        self.hist_index: int | None = None
        self.saved: list[str] = []
        self.out = Reduced()
        self.line_unknown: str | None = None
        self.last_yank = 0

    def clone(self) -> LineEditor:
        """An independent copy (its lists copied) that goes on from the same state."""
        twin = copy.copy(self)
        twin.history, twin.buf, twin.kills = [*self.history], [*self.buf], [*self.kills]
        twin.saved = [*self.saved]
        return twin

    def start(self) -> None:
        """Start a new action: what it runs is collected afresh; the line carries over."""
        self.out = Reduced()

    def result(self) -> Reduced:
        self.out.pending = "".join(self.buf)
        if self.line_unknown and self.out.pending.strip() and self.out.unknown is None:
            self.out.unknown = self.line_unknown
        return self.out

    def _unreadable(self, why: str) -> None:
        self.line_unknown = self.line_unknown or why

    # -- line operations ------------------------------------------------------------------

    def _insert(self, text: str) -> None:
        self.buf[self.pos : self.pos] = list(text)
        self.pos += len(text)

    def _kill(self, start: int, end: int) -> None:
        if start < end:
            self.kills.append("".join(self.buf[start:end]))
            del self.buf[start:end]
            self.pos = start

    def _word_end(self) -> int:
        i = self.pos
        while i < len(self.buf) and not _WORD.match(self.buf[i]):
            i += 1
        while i < len(self.buf) and _WORD.match(self.buf[i]):
            i += 1
        return i

    def _word_start(self) -> int:
        i = self.pos
        while i > 0 and not _WORD.match(self.buf[i - 1]):
            i -= 1
        while i > 0 and _WORD.match(self.buf[i - 1]):
            i -= 1
        return i

    def _recall(self, index: int) -> None:
        if index < 0:
            self._unreadable("a history entry older than the trajectory shows")
            return
        if self.hist_index is None:
            self.saved = list(self.buf)
        if index >= len(self.history):
            self.buf = list(self.saved)
            self.hist_index = None
        else:
            self.buf = list(self.history[index])
            self.hist_index = index
        self.pos = len(self.buf)

    def _accept(self) -> None:
        line = "".join(self.buf)
        self.buf, self.pos, self.hist_index = [], 0, None
        unknown, self.line_unknown = self.line_unknown, None
        if unknown is not None:
            self.out.unknown = self.out.unknown or unknown
            return
        run = line
        printed = False
        if self.expand:
            try:
                run, printed = expand_history(line, self.history)
                fc = fc_line(run, self.history)
            except HistoryError as exc:
                self.out.unknown = self.out.unknown or f"history expansion: {exc}"
                return
            if fc is not None:
                run = fc
        if not printed:
            self.out.lines.append(run)
        ignored = self.ignore_space and (
            run[:1].isspace() or bool(self.history and self.history[-1] == run)
        )
        if run.strip() and not ignored:
            self.history.append(run)

    # -- input --------------------------------------------------------------------------

    def feed_item(self, item: Any) -> None:
        keys = item.get("keystrokes") if isinstance(item, Mapping) else None
        if not isinstance(keys, str):
            self.out.unknown = self.out.unknown or "an item that is not keystrokes"
            return
        name = keys.strip()
        if name and KEY_NAME.fullmatch(name):
            seq = key_sequence(name)
            if seq is None:
                self._unreadable(f"the key {name}")
                return
            self.feed(seq)
        else:
            self.feed(keys)

    def feed(self, text: str) -> None:
        i = 0
        while i < len(text):
            ch = text[i]
            i += 1
            if self.quoted:
                self.quoted = False
                self._insert(ch)
            elif ch >= " " and ch != "\x7f":
                j = i
                while j < len(text) and text[j] >= " " and text[j] != "\x7f":
                    j += 1
                self._insert(text[i - 1 : j])
                i = j
            elif ch in "\r\n":
                self._accept()
            elif ch == "\x01":
                self.pos = 0
            elif ch == "\x05":
                self.pos = len(self.buf)
            elif ch == "\x02":
                self.pos = max(0, self.pos - 1)
            elif ch == "\x06":
                self.pos = min(len(self.buf), self.pos + 1)
            elif ch == "\x04":
                if self.buf:
                    del self.buf[self.pos : self.pos + 1]
                else:  # EOF: this shell exits; keys that follow reach another reader
                    self._unreadable("C-d on an empty line ends the shell")
            elif ch in "\x08\x7f":
                if self.pos > 0:
                    del self.buf[self.pos - 1]
                    self.pos -= 1
            elif ch == "\x0b":
                self._kill(self.pos, len(self.buf))
            elif ch == "\x15":
                self._kill(0, self.pos)
            elif ch == "\x17":
                k = self.pos
                while k > 0 and self.buf[k - 1].isspace():
                    k -= 1
                while k > 0 and not self.buf[k - 1].isspace():
                    k -= 1
                self._kill(k, self.pos)
            elif ch == "\x19":
                if self.kills:
                    self.last_yank = len(self.kills[-1])
                    self._insert(self.kills[-1])
            elif ch == "\x14":
                if self.pos > 0:
                    p = self.pos if self.pos < len(self.buf) else self.pos - 1
                    if p > 0:
                        self.buf[p - 1], self.buf[p] = self.buf[p], self.buf[p - 1]
                        self.pos = p + 1
            elif ch == "\x03":
                line = "".join(self.buf)
                if line.strip():
                    self.out.discarded.append(line)
                self.buf, self.pos, self.hist_index, self.line_unknown = [], 0, None, None
            elif ch == "\x16" and i < len(text):
                self._insert(text[i])
                i += 1
            elif ch == "\x10":
                self._recall(
                    (len(self.history) if self.hist_index is None else self.hist_index) - 1
                )
            elif ch == "\x0e":
                if self.hist_index is not None:
                    self._recall(self.hist_index + 1)
            elif ch == "\x1d" and i < len(text):
                found = "".join(self.buf).find(text[i], self.pos + 1)
                self.pos = found if found >= 0 else self.pos
                i += 1
            elif ch in "\x00\x07\x0c\x11\x13\x1a\x1c\x1e":
                pass  # set-mark, abort, clear-screen, flow control, signals bash ignores
            elif ch == _ESC:
                i = self._escape(text, i)
            else:
                names = {"\t": "Tab", "\x12": "C-r", "\x18": "C-x", "\x1f": "C-_", "\x0f": "C-o"}
                self._unreadable(f"the key {names.get(ch, repr(ch))}")
                if ch == "\x18":
                    i += 1

    def _escape(self, text: str, i: int) -> int:
        m = _CSI.match(text, i - 1)
        if m:
            params, final = m.group(1), m.group(2) or m.group(3)
            end = m.end()
            code = (params or "") + final
            if code == "200~":
                stop = text.find("\x1b[201~", end)
                self._insert(text[end : stop if stop >= 0 else len(text)])
                return stop + 6 if stop >= 0 else len(text)
            self._csi(code)
            return end
        if i >= len(text):
            self._unreadable("ESC at the end of the keys")
            return i
        ch = text[i]
        i += 1
        if ch == "b":
            self.pos = self._word_start()
        elif ch == "f":
            self.pos = self._word_end()
        elif ch == "d":
            self._kill(self.pos, self._word_end())
        elif ch in "\x7f\x08":
            self._kill(self._word_start(), self.pos)
        elif ch in "ulc":
            end = self._word_end()
            word = "".join(self.buf[self.pos : end])
            new = word.upper() if ch == "u" else word.lower() if ch == "l" else word.capitalize()
            self.buf[self.pos : end] = list(new)
            self.pos = end
        elif ch in "._":
            words = self.history[-1].split() if self.history else []
            if not words:
                self._unreadable("M-. with no earlier line")
            else:
                self._insert(words[-1])
        elif ch == "#":
            self.buf.insert(0, "#")
            self._accept()
        elif ch == "r":
            self.buf, self.pos = [], 0
        elif ch == "<":
            self._recall(0) if self.history else self._unreadable("M-< with no history")
        elif ch == ">":
            self._recall(len(self.history))
        elif ch == "\\":
            a = b = self.pos
            while a > 0 and self.buf[a - 1] in " \t":
                a -= 1
            while b < len(self.buf) and self.buf[b] in " \t":
                b += 1
            del self.buf[a:b]
            self.pos = a
        elif ch == "y" and self.last_yank and len(self.kills) > 1:
            del self.buf[self.pos - self.last_yank : self.pos]
            self.pos -= self.last_yank
            self.kills.insert(0, self.kills.pop())
            self.last_yank = len(self.kills[-1])
            self._insert(self.kills[-1])
        else:
            self._unreadable(f"the key M-{ch!r}")
        return i

    def _csi(self, code: str) -> None:
        """Cursor keys; ``~`` keys and Ctrl-arrows as Debian's /etc/inputrc binds them
        (``inputrc``), or unbound, as a bash without it reads them (the key is dropped)."""
        if code in ("A", "OA"):
            self.feed("\x10")
        elif code in ("B", "OB"):
            self.feed("\x0e")
        elif code in ("C", "OC"):
            self.pos = min(len(self.buf), self.pos + 1)
        elif code in ("D", "OD"):
            self.pos = max(0, self.pos - 1)
        elif code in ("H", "OH"):
            self.pos = 0
        elif code in ("F", "OF"):
            self.pos = len(self.buf)
        elif code in _INPUTRC_KEYS:
            if self.inputrc:
                self._inputrc(code)
        else:
            self._unreadable(f"the key sequence ESC [{code}")

    def _inputrc(self, code: str) -> None:
        if code == "1~":
            self.pos = 0
        elif code == "4~":
            self.pos = len(self.buf)
        elif code == "3~":
            del self.buf[self.pos : self.pos + 1]
        elif code == "2~":
            self.quoted = True
        elif code in ("1;5C", "5C"):
            self.pos = self._word_end()
        else:
            self.pos = self._word_start()

    def feed_line(self, text: str) -> None:
        """A plain command text an earlier action ran: its lines join the history."""
        for line in text.splitlines():
            if line.strip() and not (self.ignore_space and line[:1].isspace()):
                self.history.append(line)
        self.buf, self.pos, self.hist_index = [], 0, None


def reduce_keys(items: Iterable[Any], *, literal: bool = False) -> Reduced:
    """The lines a fresh bash prompt runs for ``items`` (``literal``: no key names)."""
    editor = LineEditor()
    for item in items:
        if literal and isinstance(item, Mapping):
            editor.feed(str(item.get("keystrokes", "")))
        else:
            editor.feed_item(item)
    return editor.result()


def replay(editor: LineEditor, action: Any) -> bool:
    """Feed one terminal action to ``editor``; ``False`` when it is not a terminal action."""
    if isinstance(action, str) or (
        isinstance(action, Mapping) and isinstance(action.get("command"), str)
    ):
        editor.feed_line(action if isinstance(action, str) else str(action["command"]))
        return True
    items: Sequence[Any] = [action] if isinstance(action, Mapping) else action
    if not all(isinstance(i, Mapping) and isinstance(i.get("keystrokes"), str) for i in items):
        return False
    for item in items:
        editor.feed_item(item)
    return True
