"""Bash history expansion, as an interactive bash applies it to a line before running it.

``!!``, ``!n``, ``!-n``, ``!str``, ``!?str?``, ``!#``; word designators (``:0``,
``:n``, ``^``, ``$``, ``*``, ``x-y``, ``x*``, ``x-``, ``%``); modifiers (``:h``
``:t`` ``:r`` ``:e`` ``:p`` ``:q`` ``:x`` ``:s/old/new/`` ``:gs`` ``:&``
``:g&``); quick substitution ``^old^new^``; and ``fc -s [old=new] [cmd]``.
Single quotes and a backslash stop expansion, as do ``!`` before a blank,
``=``, ``(`` or ``"``. Anything this reader cannot resolve (an event not in the
history, a bad word designator, an unknown modifier) raises
:class:`HistoryError`: the caller counts such a line as unreadable, never as
harmless (bash would not run it, unless its history holds more than the
trajectory shows).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

__all__ = ["HistoryError", "expand_history", "fc_line", "history_words"]


class HistoryError(ValueError):
    """A history reference this reader cannot resolve."""


_META = re.compile(r"\s+|(\|\||&&|;;|[|&;<>()]+)")


def history_words(line: str) -> list[str]:
    """The words of a history line as bash's history tokenizer splits them (quotes kept,
    runs of ``|&;<>()`` as words of their own)."""
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch.isspace():
            i += 1
            continue
        if ch in "|&;<>()":
            j = i
            while j < n and line[j] in "|&;<>()":
                j += 1
            words.append(line[i:j])
            i = j
            continue
        j = i
        quote = ""
        while j < n:
            c = line[j]
            if quote:
                if c == "\\" and quote == '"':
                    j += 2
                    continue
                if c == quote:
                    quote = ""
            elif c in "'\"`":
                quote = c
            elif c == "\\":
                j += 2
                continue
            elif c.isspace() or c in "|&;<>()":
                break
            j += 1
        words.append(line[i:j])
        i = j
    return words


def _event(line: str, i: int, history: Sequence[str], so_far: str) -> tuple[str, int]:
    """The event a ``!`` at ``line[i]`` designates, and where its text ends."""
    nxt = line[i + 1] if i + 1 < len(line) else ""
    if nxt == "!":
        return _last(history), i + 2
    if nxt == "#":
        return so_far, i + 2
    if nxt in "^$*%:-" and not (nxt == "-" and line[i + 2 : i + 3].isdigit()):
        return _last(history), i + 1
    m = re.match(r"-?\d+", line[i + 1 :])
    if m:
        n = int(m.group(0))
        index = n - 1 if n > 0 else len(history) + n
        if not 0 <= index < len(history) or n == 0:
            raise HistoryError(f"!{n}: event not found")
        return history[index], i + 1 + len(m.group(0))
    if nxt == "?":
        end = line.find("?", i + 2)
        needle = line[i + 2 : end if end >= 0 else len(line)]
        for entry in reversed(history):
            if needle in entry:
                return entry, (end + 1 if end >= 0 else len(line))
        raise HistoryError(f"!?{needle}: event not found")
    m = re.match(r"[^\s:;&|<>()\"'^$*%]+", line[i + 1 :])
    if not m:
        raise HistoryError("unreadable history event")
    prefix = m.group(0)
    for entry in reversed(history):
        if entry.startswith(prefix):
            return entry, i + 1 + len(prefix)
    raise HistoryError(f"!{prefix}: event not found")


def _last(history: Sequence[str]) -> str:
    if not history:
        raise HistoryError("!!: event not found")
    return history[-1]


_DESIGNATOR = re.compile(r"(\d+|\^|\$|%)?(?:(-)(\d+|\$|\^)?|(\*))?")


def _select(event: str, spec: str) -> str:
    words = history_words(event)
    last = len(words) - 1

    def index(token: str) -> int:
        return 1 if token == "^" else last if token == "$" else int(token)

    if spec == "*":
        return " ".join(words[1:])
    m = _DESIGNATOR.fullmatch(spec)
    if not m or spec == "%":
        raise HistoryError(f"bad word specifier {spec!r}")
    first, dash, second, star = m.groups()
    start = index(first) if first else 0
    if star:
        end = last
    elif dash:
        end = index(second) if second else last - 1
    else:
        end = start
    if not 0 <= start <= last or end > last or (end < start and not (dash and not second)):
        raise HistoryError(f"bad word specifier {spec!r}")
    return " ".join(words[start : end + 1])


def _modify(text: str, mods: str, state: dict[str, object]) -> tuple[str, int]:
    """Apply ``:h``/``:t``/``:s/a/b/``... modifiers; returns the text and the chars used."""
    used = 0
    while mods[used : used + 1] == ":":
        m = re.match(r":(g|G|a)?(s|&)(.)?", mods[used:])
        if m and (m.group(2) == "&" or m.group(3)):
            if m.group(2) == "s":
                delim = m.group(3)
                parts = re.match(
                    rf"((?:[^{re.escape(delim)}\\]|\\.)*){re.escape(delim)}"
                    rf"((?:[^{re.escape(delim)}\\]|\\.)*)(?:{re.escape(delim)})?",
                    mods[used + m.end() :],
                )
                if parts is None:
                    raise HistoryError("bad substitution")
                old = parts.group(1) or str(state.get("old", ""))
                new = parts.group(2).replace("&", old)
                state["old"], state["new"] = old, new
                length = m.end() + parts.end()
            else:
                old, new = str(state.get("old", "")), str(state.get("new", ""))
                length = m.end()
            if not old or old not in text:
                raise HistoryError("substitution failed")
            text = text.replace(old, new) if m.group(1) else text.replace(old, new, 1)
            used += length
            continue
        letter = mods[used + 1 : used + 2]
        if letter == "h":
            text = text.rsplit("/", 1)[0] if "/" in text else text
        elif letter == "t":
            text = text.rsplit("/", 1)[-1]
        elif letter == "r":
            text = re.sub(r"\.[^./]*$", "", text)
        elif letter == "e":
            found = re.search(r"\.[^./]*$", text)
            text = found.group(0)[1:] if found else ""
        elif letter == "p":
            state["print"] = True
        elif letter == "q":
            text = shlex.quote(text) if text else "''"
        elif letter == "x":
            text = " ".join(shlex.quote(w) for w in text.split())
        else:
            raise HistoryError(f"unknown history modifier :{letter}")
        used += 2
    return text, used


def expand_history(line: str, history: Sequence[str]) -> tuple[str, bool]:
    """``line`` after history expansion and whether ``:p`` asked to print it only."""
    state: dict[str, object] = {}
    if line.startswith("^"):
        parts = line[1:].split("^", 2)
        if len(parts) < 2 or not parts[0]:
            raise HistoryError("bad quick substitution")
        event = _last(history)
        if parts[0] not in event:
            raise HistoryError("quick substitution failed")
        rest = parts[2] if len(parts) > 2 else ""
        return event.replace(parts[0], parts[1], 1) + rest, False
    if "!" not in line:
        return line, False
    out: list[str] = []
    i, quote = 0, ""
    while i < len(line):
        ch = line[i]
        if ch == "\\" and quote != "'":
            out.append(line[i : i + 2])
            i += 2
            continue
        if ch == "'" and quote != '"':
            quote = "" if quote == "'" else "'"
        elif ch == '"' and quote != "'":
            quote = "" if quote == '"' else '"'
        if ch != "!" or quote == "'":
            out.append(ch)
            i += 1
            continue
        nxt = line[i + 1] if i + 1 < len(line) else ""
        if nxt in ("", " ", "\t", "\n", "=", "(", '"'):
            out.append(ch)
            i += 1
            continue
        event, i = _event(line, i, history, "".join(out))
        text = event
        rest = line[i:]
        spec = re.match(r":?(\*|[\^$%]|\d*-?(?:\d+|\$|\^)?\*?)", rest)
        if spec and spec.group(1) and (rest.startswith(":") or spec.group(1)[0] in "^$*%-"):
            text = _select(event, spec.group(1))
            i += spec.end()
        text, used = _modify(text, line[i:], state)
        i += used
        out.append(text)
    return "".join(out), bool(state.get("print"))


_UNQUOTED = str.maketrans("", "", "'\"\\")


def may_run_fc(line: str) -> bool:
    """Can ``line`` hold an ``fc`` command? (shlex's words are the line less its quoting.)"""
    return "fc" in line.translate(_UNQUOTED)


def fc_line(line: str, history: Sequence[str]) -> str | None:
    """The command ``fc -s [old=new ...] [cmd]`` re-runs, ``None`` when ``line`` is not one.

    Raises :class:`HistoryError` when the entry it names is not in ``history``.
    """
    if not may_run_fc(line):
        return None
    try:
        words = shlex.split(line)
    except ValueError:
        return None
    if len(words) < 2 or words[0] != "fc" or words[1] != "-s":
        return None
    pairs = [w for w in words[2:] if "=" in w]
    rest = [w for w in words[2:] if "=" not in w]
    entry: str | None = None
    if not rest:
        entry = history[-1] if history else None
    elif re.fullmatch(r"-?\d+", rest[0]):
        n = int(rest[0])
        index = n - 1 if n > 0 else len(history) + n
        entry = history[index] if 0 <= index < len(history) else None
    else:
        entry = next((e for e in reversed(history) if e.startswith(rest[0])), None)
    if entry is None:
        raise HistoryError("fc: no command found")
    for pair in pairs:
        old, new = pair.split("=", 1)
        entry = entry.replace(old, new) if old else entry
    return entry
