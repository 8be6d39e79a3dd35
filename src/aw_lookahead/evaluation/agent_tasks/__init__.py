"""The agent task suite: closed-loop terminal tasks run for real, held out from training.

:mod:`.tasks` holds the data (:data:`TASKS`, :data:`FAMILIES`): setup commands, an
instruction, a check that exits 0 on success, and a known solution that only tests use.
The tasks are written family by family in :mod:`.families`; :mod:`.task` defines their shape.
"""

from __future__ import annotations

from .tasks import FAMILIES, TASKS, AgentTask, select_tasks

__all__ = ["FAMILIES", "TASKS", "AgentTask", "select_tasks"]
