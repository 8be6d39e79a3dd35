"""Grounded lookahead: look at the environment, read-only, before the world model guesses.

An :class:`Environment` answers one question per action: what does the state
it depends on look like right now? The engine (:class:`~aw_lookahead.lookahead.Lookahead`,
``environment=``) asks it before simulating. What is observed missing decides
with certainty (a veto on basis ``observed``, with a did-you-mean); the rest
of what was seen goes to the world model as the turn's ``**Current State:**``,
so it simulates from the real state instead of guessing it.

Environments here: :class:`LocalEnvironment` (the files under a root folder
of this machine, PATH, git refs, make targets), which also follows a live
:class:`~aw_lookahead.sandbox.TerminalSandbox` (:meth:`LocalEnvironment.following`,
or pass the sandbox itself); the MCP proxy looks through its downstream
server's read-only tools (:mod:`aw_lookahead.mcp`).

Looking never writes and never runs the action's programs; an environment
that fails or is slow leaves the action to the world model, as before.
"""

from __future__ import annotations

import inspect
import os
from typing import Protocol, runtime_checkable

from aw_lookahead.errors import ConfigError
from aw_lookahead.trajectory import Action, Trajectory

from .local import LocalEnvironment, ShellHost
from .observation import Fact, FactKind, Observation

__all__ = [
    "Environment",
    "Fact",
    "FactKind",
    "LocalEnvironment",
    "Observation",
    "ShellHost",
    "as_environment",
]


@runtime_checkable
class Environment(Protocol):
    """Something the engine can look at before an action runs.

    ``observe`` returns what the action depends on, seen read-only, or
    ``None`` when it has nothing to say about this action. It must not write,
    must not run the action or its programs, and should answer in
    milliseconds; an exception from it leaves the action to the world model.
    """

    async def observe(self, trajectory: Trajectory, action: Action) -> Observation | None: ...


EnvironmentLike = Environment | ShellHost | str | os.PathLike[str]


def as_environment(value: EnvironmentLike | None) -> Environment | None:
    """``value`` as an :class:`Environment`: a folder path becomes a :class:`LocalEnvironment`
    rooted there, a live shell (``TerminalSandbox``) one that follows it."""
    if value is None or isinstance(value, Environment):
        return value
    if all(
        inspect.getattr_static(value, n, None) is not None for n in ("path", "cwd", "search_path")
    ):
        return LocalEnvironment.following(value)  # type: ignore[arg-type]
    if isinstance(value, str | os.PathLike):
        if not os.path.isdir(value):
            raise ConfigError(
                f"environment {os.fspath(value)!r} is not a folder; give the folder the agent's "
                "commands run in, a TerminalSandbox, or an Environment"
            )
        return LocalEnvironment(value)
    raise ConfigError(
        f"environment must be a folder path, a TerminalSandbox or an Environment (an object "
        f"with `async observe(trajectory, action)`), got {type(value).__name__}"
    )
