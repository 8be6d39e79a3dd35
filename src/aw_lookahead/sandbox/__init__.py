"""Real executors that produce ground truth for the world model (terminal first).

:class:`TerminalSandbox` is an async, persistent bash session;
:class:`SyncTerminalSandbox` is its blocking twin; :func:`record_trajectory`
turns a list of commands into a :class:`~aw_lookahead.trajectory.Trajectory`
of real observations, formatted by :func:`observation`.
"""

from __future__ import annotations

from ._blocking import SyncTerminalSandbox
from ._keys import SUPPORTED_KEYS
from .record import arecord_trajectory, record_trajectory
from .terminal import DEFAULT_MAX_OUTPUT_BYTES, CommandResult, TerminalSandbox, observation

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "SUPPORTED_KEYS",
    "CommandResult",
    "SyncTerminalSandbox",
    "TerminalSandbox",
    "arecord_trajectory",
    "observation",
    "record_trajectory",
]
