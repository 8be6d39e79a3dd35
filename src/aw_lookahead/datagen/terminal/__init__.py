"""Terminal training data: template task families run in real bash sandboxes.

``spec`` is the vocabulary of a task template, ``families/`` the templates
themselves (importing the generator registers them all), ``generator`` runs
them in sandboxes and writes the split dataset (see its docstring for the
guarantees).
"""

from __future__ import annotations

from .generator import (
    FAMILIES,
    GENERATOR,
    HOME,
    SANDBOX_ENV,
    agenerate_terminal,
    build_task,
    family_order,
    generate_terminal,
    normalise_output,
    stderr_progress,
)

__all__ = [
    "FAMILIES",
    "GENERATOR",
    "HOME",
    "SANDBOX_ENV",
    "agenerate_terminal",
    "build_task",
    "family_order",
    "generate_terminal",
    "normalise_output",
    "stderr_progress",
]
