"""What a terminal action runs after a history, under each setting bash may run with.

:func:`replays` reads an action as :class:`~.reader.LineEditor` does after the earlier
actions, once per setting. The router, the judges and the fail-safe ask it about every
candidate, with histories that grow a turn a step, so it keeps what it computed: one
:class:`_Past` per distinct history (found by the identity of its actions), holding the
editors' state after it, which a history one turn longer goes on from; each action's
reading per history; each trajectory's history. Entries hold the objects whose ids key
them (so no other object can take those ids): an action is read as it was when first
seen, so change a copy, never an action or a trajectory in place.
"""

from __future__ import annotations

import operator
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from aw_lookahead.trajectory import Action, Trajectory

from .history import may_run_fc
from .reader import LineEditor, Reduced, replay

__all__ = ["replays"]

# (history expansion on, history ignoring lines that start with a blank, Debian's
# /etc/inputrc read): the settings an interactive bash may run with; a line is judged
# under each, so the worst reading counts.
_SHELL_SETTINGS = (
    (True, False, True),
    (True, True, True),
    (False, False, True),
    (True, False, False),
)
_KEPT = 64
_SETTING_KEYS = re.compile(r"[!^\x00-\x09\x0b-\x1f\x7f]")
_ACTION = operator.attrgetter("action")
_lock = threading.Lock()


class _Past:
    """One history: its actions, their ids, and (once asked) the editors' state after it."""

    __slots__ = ("actions", "editors", "ids")

    def __init__(self, actions: tuple[Action, ...], ids: tuple[int, ...]) -> None:
        self.actions, self.ids = actions, ids
        self.editors: list[LineEditor] | None = None


_PASTS: OrderedDict[tuple[int, ...], _Past] = OrderedDict()
_TRAJECTORIES: OrderedDict[int, tuple[Trajectory, list[Any], int, _Past]] = OrderedDict()
_READ: OrderedDict[tuple[_Past, int], tuple[Action, list[Reduced] | None]] = OrderedDict()


def replays(action: Action, earlier: Sequence[Action] | Trajectory) -> list[Reduced] | None:
    """What ``action`` does under each setting after the earlier actions (or a trajectory's
    turns); ``None`` when it is not a terminal action. The result is shared: only read it."""
    past = _past(earlier)
    key = (past, id(action))
    with _lock:
        found = _READ.get(key)
    if found is None:
        found = (action, _read(action, _states(past)))
    with _lock:
        _bounded(_READ, key, found, 4 * _KEPT)
    return found[1]


def _past(history: Sequence[Action] | Trajectory) -> _Past:
    """The history's :class:`_Past`; for a trajectory, looked up once while it is unchanged."""
    traj = history if isinstance(history, Trajectory) else None
    if traj is not None:
        with _lock:
            seen = _TRAJECTORIES.get(id(traj))
        if seen is not None and seen[1] is traj.turns and seen[2] == len(traj.turns):
            return seen[3]
        actions = tuple(map(_ACTION, traj.turns))
    else:
        assert not isinstance(history, Trajectory)
        actions = tuple(history)
    past = _known(actions, tuple(map(id, actions)))
    if traj is not None:
        with _lock:
            _bounded(_TRAJECTORIES, id(traj), (traj, traj.turns, len(traj.turns), past), 16)
    return past


def _known(actions: tuple[Action, ...], ids: tuple[int, ...]) -> _Past:
    with _lock:
        past = _PASTS.get(ids) or _Past(actions, ids)
        _bounded(_PASTS, ids, past, _KEPT)
    return past


def _states(past: _Past) -> list[LineEditor]:
    """The editors (one per setting) after ``past``: shared, so only read them or go on from
    a :meth:`~.reader.LineEditor.clone`. A history one turn longer than one already read
    (an agent's next step) replays only its newest turn; otherwise the history is replayed
    and the state before its newest turn kept too (for a newest turn that changes)."""
    if past.editors is not None:
        return past.editors
    if not past.ids:
        past.editors = [
            LineEditor(expand=e, ignore_space=i, inputrc=r) for e, i, r in _SHELL_SETTINGS
        ]
        return past.editors
    before = _known(past.actions[:-1], past.ids[:-1])
    editors = [e.clone() for e in _states(before)] if before.editors else None
    if editors is None:
        editors = _replayed([e.clone() for e in _states(_known((), ()))], past.actions[:-1])
        before.editors = [e.clone() for e in editors]
    past.editors = _replayed(editors, past.actions[-1:])
    return past.editors


def _replayed(editors: list[LineEditor], actions: Sequence[Action]) -> list[LineEditor]:
    for editor in editors:
        for action in actions:
            replay(editor, action)
    return editors


def _read(action: Action, states: list[LineEditor]) -> list[Reduced] | None:
    text = action if isinstance(action, str) else None
    if isinstance(action, Mapping) and isinstance(action.get("command"), str):
        text = str(action["command"])
    if text is not None:
        text = text if text.endswith("\n") else text + "\n"
        inert = not _SETTING_KEYS.search(text) and not may_run_fc(text)
        if inert and all(not s.buf and s.line_unknown is None and not s.quoted for s in states):
            # no key, expansion or unfinished line for a setting or the history to change
            editor = LineEditor()
            editor.feed(text)
            return [editor.result()] * len(states)
    out: list[Reduced] = []
    for state in states:
        editor = state.clone()
        editor.start()
        if text is not None:
            editor.feed(text)
        elif not replay(editor, action):
            return None
        out.append(editor.result())
    return out


def _bounded(memo: OrderedDict[Any, Any], key: Any, value: Any, size: int) -> None:
    memo[key] = value
    memo.move_to_end(key)
    while len(memo) > size:
        memo.popitem(last=False)
