"""Terminal training data: template task families run in real bash sandboxes.

``spec`` is the vocabulary of a task template, ``families/`` the templates
themselves (importing the generator registers them all), ``generator`` runs
them in sandboxes and writes the split dataset (see its docstring for the
guarantees): :func:`generate_terminal` (async) and
:func:`generate_terminal_sync` (blocking); :func:`record_tasks` runs task
specs of your own the same way.
"""

from __future__ import annotations

from .generator import (
    FAMILIES,
    GENERATOR,
    HOME,
    SANDBOX_ENV,
    build_task,
    family_order,
    generate_terminal,
    generate_terminal_sync,
    normalise_output,
    record_tasks,
    stderr_progress,
)

__all__ = [
    "FAMILIES",
    "GENERATOR",
    "HOME",
    "SANDBOX_ENV",
    "build_task",
    "family_order",
    "generate_terminal",
    "generate_terminal_sync",
    "normalise_output",
    "record_tasks",
    "stderr_progress",
]
