"""Real executors that produce ground truth for the world model (terminal first).

:class:`TerminalSandbox` is an async, persistent bash session; blocking code
uses it as a plain context manager with its ``_sync`` methods (``with
TerminalSandbox() as sb: sb.run_sync(...)``). :func:`record_trajectory`
(blocking: :func:`record_trajectory_sync`) turns a list of commands into a
:class:`~aw_lookahead.trajectory.Trajectory` of real observations, formatted by
:func:`observation`.
"""

from __future__ import annotations

from ._keys import SUPPORTED_KEYS
from .record import record_trajectory, record_trajectory_sync
from .terminal import DEFAULT_MAX_OUTPUT_BYTES, CommandResult, TerminalSandbox, observation

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "SUPPORTED_KEYS",
    "CommandResult",
    "TerminalSandbox",
    "observation",
    "record_trajectory",
    "record_trajectory_sync",
]
