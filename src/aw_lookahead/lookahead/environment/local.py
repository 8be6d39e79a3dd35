"""Observe a terminal action on a folder tree of this machine: a sandbox, or the agent's own.

:class:`LocalEnvironment` reads a shell action's plan (:mod:`.needs`) against
the files under its root, the directories on its PATH, the git refs and the
makefile there, and returns an :class:`~.observation.Observation`. Guarantees:

* **read-only**: ``lstat``, ``scandir``, ``readlink`` and reading a makefile
  or git's ref files; nothing is written and no program runs;
* **inside the root**: nothing outside it is read but PATH's directories; a
  path or symlink that leads out is unknown (never missing);
* **bounded**: each look stops at ``time_budget_s`` of CPU time (what was not looked at is
  unknown) and runs in a worker thread, off the event loop;
* **certain or silent**: a need is ``missing`` only when it is observed unmet
  and nothing the action does before it may have met it.
"""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path
from typing import Protocol, runtime_checkable

from aw_lookahead.lookahead.routing import lines_run, typed_text
from aw_lookahead.lookahead.shell_parse import parse_script
from aw_lookahead.trajectory import Action, Domain, Trajectory

from .files import Tree
from .look import Look
from .needs import shell_plan
from .observation import Observation

__all__ = ["LocalEnvironment", "ShellHost"]

_DEFINES_NAMES = re.compile(r"\bPATH\b|\balias\b|\(\s*\)|\bfunction\b|\bsource\b|(^|[;&|]\s*)\.\s")
_HISTORY_SCAN = 200


@runtime_checkable
class ShellHost(Protocol):
    """A shell whose files live on this machine (:class:`~aw_lookahead.sandbox.TerminalSandbox`):
    its root folder, its working directory now, and the PATH it looks programs up on."""

    @property
    def path(self) -> Path: ...

    @property
    def cwd(self) -> Path: ...

    @property
    def search_path(self) -> str: ...


class LocalEnvironment:
    """The files under ``root`` as an agent's shell sees them, looked at read-only.

    ``cwd`` is the working directory the agent's commands start in (default
    ``root``); ``search_path`` the PATH its shell uses (default this process's);
    ``home`` what ``~`` means (default: not read). :meth:`following` tracks a
    live shell (a :class:`~aw_lookahead.sandbox.TerminalSandbox`): its root,
    working directory and PATH are read at each look.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        search_path: str | None = None,
        home: str | os.PathLike[str] | None = None,
        time_budget_s: float = 0.05,
    ) -> None:
        self._root = Path(root)
        self._cwd = Path(cwd) if cwd is not None else None
        self._search_path = search_path
        self._home = Path(home) if home is not None else None
        self._host: ShellHost | None = None
        self.time_budget_s = time_budget_s

    @classmethod
    def following(cls, host: ShellHost, *, time_budget_s: float = 0.05) -> LocalEnvironment:
        """An environment that reads ``host``'s root, working directory and PATH at each look."""
        env = cls(".", time_budget_s=time_budget_s)
        env._host = host
        return env

    def _where(self) -> tuple[Path, Path, str, Path | None]:
        if self._host is not None:
            root = self._host.path
            return root, self._host.cwd, self._host.search_path, root
        root = self._root.resolve()
        cwd = (root / self._cwd) if self._cwd is not None else root
        return root, cwd, self._search_path or os.environ.get("PATH", ""), self._home

    async def observe(self, trajectory: Trajectory, action: Action) -> Observation | None:
        """What ``action`` needs, observed under the root; ``None`` for an action not read
        here (not a terminal action, or keys that edit the line)."""
        text = _shell_text(trajectory, action)
        if text is None:
            return None
        root, cwd, search_path, home = self._where()
        vetoes_programs = not _defines_names(trajectory, text)
        plan = shell_plan(parse_script(text))
        look = Look(Tree(root, home), cwd, search_path, self.time_budget_s, vetoes_programs)
        return await asyncio.to_thread(look.run, plan)


def _shell_text(trajectory: Trajectory, action: Action) -> str | None:
    if trajectory.domain is not Domain.TERMINAL:
        return None
    text = lines_run(action, [turn.action for turn in trajectory.turns[-_HISTORY_SCAN:]])
    return text if text is not None and text.strip() else None


def _defines_names(trajectory: Trajectory, text: str) -> bool:
    """Could a program name mean something PATH does not show (a function, an alias, a
    changed PATH), from this action or the session before it?"""
    if _DEFINES_NAMES.search(text):
        return True
    for turn in trajectory.turns[-_HISTORY_SCAN:]:
        typed = typed_text(turn.action)
        if typed is None or _DEFINES_NAMES.search(typed.text):
            return True
    return len(trajectory.turns) > _HISTORY_SCAN
