"""Incremental history rendering: each turn rendered once, history keys chained from the prefix.

An agent's history grows by one turn a step, and every step needs the whole
rendered history (the request, and the prediction cache's keys). Rendering
and hashing it afresh each step makes a step cost grow with the history.
Here the last few histories rendered after each *header* (system message,
task, initial state, the tool definitions turns carry) are remembered, turn
by turn; a new rendering reuses the longest remembered prefix of turns and
renders and hashes only the turns after it:
``key(prefix + turn) = H(key(prefix), turn's messages)``.

Guarantees:

* The messages are byte for byte those of a full rendering (:mod:`.render`
  keeps one for trimmed histories; the tests compare both).
* A turn is rendered once per :class:`~aw_lookahead.trajectory.Turn` object:
  a remembered rendering is reused only for the very same ``Turn`` objects,
  in the same order, after the same header. So a ``Turn`` counts as frozen
  once rendered: a field reassigned or an action dict edited in place
  afterwards is not seen. Build a new turn instead
  (:meth:`Trajectory.with_turn <aw_lookahead.trajectory.Trajectory.with_turn>`
  and ``model_copy(update=...)`` share the earlier turns, so that is cheap);
  checking every field of every turn each step would cost as much as the
  rendering it saves.
* The messages (a tuple of dicts) are shared with the memo: read them, never
  change them (:func:`~.render.history_messages` and
  :func:`~.render.render_messages` hand out copies).
* The key is a SHA-256 over the header and every rendered message,
  length-prefixed: two different renderings never share a key (equal
  renderings under different headers may differ in key; that costs only a
  cache miss).
* Memory is bounded: at most :data:`MAX_TURNS` remembered turns in all
  (whole headers dropped, oldest first); safe to use from several threads.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aw_lookahead.trajectory import Action, Trajectory, Turn

from .contract import render_observation, render_user_turn

__all__ = ["MAX_TURNS", "RenderedHistory", "render_history", "tool_name"]

Message = dict[str, str]
MAX_TURNS = 20_000
_LINES_PER_HEADER = 4
_VERSION = b"aw-lookahead history v2\x00"


def _field(text: str | None) -> bytes:
    """Length-prefixed bytes: concatenated fields can never be read two ways."""
    if text is None:
        return b"\xff" * 8
    data = text.encode("utf-8", "surrogatepass")
    return len(data).to_bytes(8, "big") + data


def tool_name(action: Action) -> str:
    """The tool a JSON tool-call action names (``""`` for any other action)."""
    name = action.get("name") if isinstance(action, dict) else None
    return name if isinstance(name, str) else ""


@dataclass(frozen=True, slots=True, eq=False)
class _Node:
    """The prefix ending at one turn: the key and size so far, the tools defined so far."""

    digest: bytes
    size: int
    defined: frozenset[str]


@dataclass(frozen=True, slots=True, eq=False)
class _Turns:
    """A history's turns (pinned, so their ids stay unique while remembered) and their ids."""

    turns: list[Turn]
    ids: list[int]

    @classmethod
    def of(cls, turns: Sequence[Turn]) -> _Turns:
        pinned = list(turns)
        return cls(pinned, list(map(id, pinned)))

    def common(self, other: _Turns) -> int:
        """How many leading turns the two share (the same ``Turn`` objects).

        Checks all shared turns, then all but the newest (the usual step: one
        turn more or changed), then searches with C-speed slice comparisons.
        """
        a, b = self.ids, other.ids
        n = min(len(a), len(b))
        if _head(a, n) == _head(b, n):
            return n
        if n and a[: n - 1] == b[: n - 1]:
            return n - 1
        lo, hi = 0, max(n - 2, 0)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a[:mid] == b[:mid]:
                lo = mid
            else:
                hi = mid - 1
        return lo


def _head(items: list[int], n: int) -> list[int]:
    return items if len(items) == n else items[:n]


@dataclass(frozen=True, slots=True, eq=False)
class _Line:
    """One remembered history: its turns (actions pinned, so their ids stay unique),
    a node per turn, and its messages (the system message, then two per turn)."""

    turns: _Turns
    nodes: list[_Node]
    messages: tuple[Message, ...]


class _Lines:
    """header key -> the last few histories rendered after it; bounded by turns in all."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_header: dict[bytes, list[_Line]] = {}
        self._turns = 0
        self._lock = threading.Lock()

    def best(self, header: bytes, turns: _Turns) -> tuple[_Line | None, int]:
        """The remembered line sharing the most leading turns with ``turns``, and how many."""
        found: _Line | None = None
        shared = 0
        for line in self._by_header.get(header, ()):  # newest first
            n = turns.common(line.turns)
            if n > shared:
                found, shared = line, n
            if shared >= len(turns.ids) - 1:
                break
        return found, shared

    def put(self, header: bytes, line: _Line) -> None:
        with self._lock:
            lines = self._by_header.pop(header, [])
            lines.insert(0, line)
            self._turns += len(line.nodes)
            while len(lines) > _LINES_PER_HEADER:
                self._turns -= len(lines.pop().nodes)
            self._by_header[header] = lines
            while self._turns > self.limit and len(self._by_header) > 1:
                oldest = next(iter(self._by_header))
                self._turns -= sum(len(x.nodes) for x in self._by_header.pop(oldest))

    def clear(self) -> None:
        with self._lock:
            self._by_header.clear()
            self._turns = 0


_LINES = _Lines(MAX_TURNS)


@dataclass(frozen=True, slots=True)
class RenderedHistory:
    """A rendered history: its messages, which tools still lack a definition, its key and size.

    ``key`` (hex SHA-256, see the module docstring) and ``size_bytes`` (UTF-8
    bytes + 8 per message) are set for incremental renderings, ``None`` for
    trimmed ones.
    """

    messages: tuple[Message, ...]
    tools: Mapping[str, dict[str, Any]]
    defined: frozenset[str]
    definition: Callable[[dict[str, Any]], str]
    key: str | None = None
    size_bytes: int | None = None

    def peek(self, action: Action) -> str | None:
        """The definition of the tool ``action`` calls, if no rendered turn carries it yet."""
        name = tool_name(action)
        tool = self.tools.get(name) if name not in self.defined else None
        return self.definition(tool) if tool is not None else None


def render_history(
    trajectory: Trajectory,
    system: str,
    tools: Mapping[str, dict[str, Any]],
    *,
    brief_tools: bool,
    definition: Callable[[dict[str, Any]], str],
) -> RenderedHistory:
    """Every turn of ``trajectory`` after the ``system`` message, reusing remembered turns.

    ``tools`` are the definitions that turns carry (empty unless the compact
    tool layout applies); ``definition`` renders one of them.
    """
    hasher = hashlib.sha256(_VERSION)
    for part in (system, trajectory.task, trajectory.initial_state):
        hasher.update(_field(part))
    hasher.update(b"B" if brief_tools else b"F")
    for name, tool in tools.items():
        hasher.update(_field(name) + _field(definition(tool)))
    header = hasher.digest()
    turns = trajectory.turns
    seen = _Turns.of(turns)
    line, kept = _LINES.best(header, seen)
    head = 1 if system else 0
    if line is not None and kept == len(line.nodes) == len(turns):
        nodes, messages = line.nodes, line.messages
    else:
        nodes = line.nodes[:kept] if line is not None else []
        if line is not None:
            earlier = line.messages[: head + 2 * kept]
        else:
            earlier = ({"role": "system", "content": system},) if system else ()
        node = nodes[-1] if nodes else _root(header, system)
        added: list[Message] = []
        for i in range(kept, len(turns)):
            node, user, assistant = _extend(node, i, turns[i], trajectory, tools, definition)
            nodes.append(node)
            added.append(user)
            added.append(assistant)
        messages = earlier + tuple(added)
        if added:
            _LINES.put(header, _Line(seen, nodes, messages))
    last = nodes[-1] if nodes else _root(header, system)
    return RenderedHistory(
        messages, tools, last.defined, definition, key=last.digest.hex(), size_bytes=last.size
    )


def _root(header: bytes, system: str) -> _Node:
    size = len(_field(system)) if system else 0
    return _Node(header, size, frozenset())


def _extend(
    node: _Node,
    index: int,
    turn: Turn,
    trajectory: Trajectory,
    tools: Mapping[str, dict[str, Any]],
    definition: Callable[[dict[str, Any]], str],
) -> tuple[_Node, Message, Message]:
    defined = node.defined
    user = turn.prompt
    if user is None:
        first = index == 0
        name = tool_name(turn.action)
        tool = tools.get(name) if name not in defined else None
        if tool is not None:
            defined = defined | {name}
        user = render_user_turn(
            index + 1,
            turn.action,
            task=trajectory.task if first else None,
            state=trajectory.initial_state if first else None,
            tool=definition(tool) if tool is not None else None,
        )
    assistant = turn.response if turn.response is not None else render_observation(turn.observation)
    u, a = _field(user), _field(assistant)
    return (
        _Node(hashlib.sha256(node.digest + u + a).digest(), node.size + len(u) + len(a), defined),
        {"role": "user", "content": user},
        {"role": "assistant", "content": assistant},
    )
