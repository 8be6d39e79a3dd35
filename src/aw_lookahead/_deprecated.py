"""Old import paths and names, kept for one release: each warns and hands back a working object.

A moved module leaves a stub at its old path whose module ``__getattr__``
calls :func:`moved_attribute`; a package that dropped a name from its surface
calls :func:`moved_name` from its own ``__getattr__``. Either way the caller
gets the very object the new path gives, with a :class:`DeprecationWarning`
that names the import to write instead.

A *renamed* name (:data:`RENAMED`, the async/sync naming rule of the package
docstring) is served by :func:`renamed_attribute` from the ``__getattr__`` of
every module that held it: the caller gets what the old name now means (the
async function under its new plain name, or a deprecated blocking shim) and a
warning naming what to write instead. ``tests/test_public_api.py`` walks all
three tables.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "MOVED_MODULES",
    "RENAMED",
    "Renamed",
    "moved_attribute",
    "moved_name",
    "renamed_attribute",
]

MOVED_MODULES: dict[str, str] = {
    "aw_lookahead.evaluation.masking": "aw_lookahead.evaluation.rules.masking",
    "aw_lookahead.evaluation.recording": "aw_lookahead.datagen.recording",
    "aw_lookahead.evaluation.reference_judge": "aw_lookahead.evaluation.judges.reference",
    "aw_lookahead.evaluation.rubric_judge": "aw_lookahead.evaluation.judges.rubric",
    "aw_lookahead.evaluation.verifier": "aw_lookahead.evaluation.rules.verifier",
    "aw_lookahead.lookahead.evidence": "aw_lookahead.lookahead.types",
    "aw_lookahead.worldmodel.provider": "aw_lookahead.endpoint",
}
"""Old module path -> the module that now holds everything it held."""


class Renamed(NamedTuple):
    """Where an old name now resolves (``module:attribute``) and what to write instead."""

    target: str
    use: str


_RECORD = Renamed(
    "aw_lookahead.sandbox.record:record_trajectory",
    "aw_lookahead.sandbox.record_trajectory (async; record_trajectory_sync blocks)",
)
_GENERATE = Renamed(
    "aw_lookahead.datagen.terminal.generator:generate_terminal",
    "aw_lookahead.datagen.terminal.generate_terminal (async; generate_terminal_sync blocks)",
)
_SANDBOX = Renamed(
    "aw_lookahead.sandbox._sync_wrapper:SyncTerminalSandbox",
    "aw_lookahead.sandbox.TerminalSandbox as a blocking context manager "
    "(`with TerminalSandbox() as sb: sb.run_sync(...)`)",
)
_WORLD_MODEL = Renamed(
    "aw_lookahead.worldmodel.sync:_SyncWorldModel",
    "the world model's own predict_sync / predict_many_sync (BaseWorldModel) and close() when done",
)

RENAMED: dict[str, Renamed] = {
    "aw_lookahead.SyncWorldModel": _WORLD_MODEL,
    "aw_lookahead.datagen.terminal.agenerate_terminal": _GENERATE,
    "aw_lookahead.datagen.terminal.generator.agenerate_terminal": _GENERATE,
    "aw_lookahead.sandbox.SyncTerminalSandbox": _SANDBOX,
    "aw_lookahead.sandbox.arecord_trajectory": _RECORD,
    "aw_lookahead.sandbox.record.arecord_trajectory": _RECORD,
    "aw_lookahead.worldmodel.SyncWorldModel": _WORLD_MODEL,
    "aw_lookahead.worldmodel.sync.SyncWorldModel": _WORLD_MODEL,
}
"""Old ``module.name`` -> what it resolves to now. Two names kept their spelling but changed
meaning, so no warning can reach their callers: ``sandbox.record_trajectory`` and
``datagen.terminal.generate_terminal`` were blocking and are now async (their blocking forms
are ``record_trajectory_sync`` and ``generate_terminal_sync``)."""

_STACK = 4  # _warn <- moved_attribute, moved_name or renamed_attribute <- __getattr__ <- caller


def _warn(old: str, new: str) -> None:
    warnings.warn(
        f"{old} is deprecated and goes away in the next release; use {new}",
        DeprecationWarning,
        stacklevel=_STACK,
    )


def moved_attribute(old_module: str, name: str) -> Any:
    """``name`` from the module that replaced ``old_module``, with a warning."""
    new_module = MOVED_MODULES[old_module]
    if name.startswith("__"):
        raise AttributeError(f"module {old_module!r} has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(new_module), name)
    except AttributeError:
        raise AttributeError(
            f"module {old_module!r} has no attribute {name!r} (it moved to {new_module})"
        ) from None
    _warn(f"{old_module}.{name}", f"{new_module}.{name}")
    return value


def moved_name(package: str, name: str, moved: Mapping[str, str]) -> Any:
    """``name``, dropped from ``package``'s surface, from the module ``moved`` names for it."""
    new_module = moved.get(name)
    if new_module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(new_module), name)
    _warn(f"{package}.{name}", f"{new_module}.{name}")
    return value


def renamed_attribute(module: str, name: str) -> Any:
    """What ``module.name`` (an old name of :data:`RENAMED`) resolves to now, with a warning.

    Any other name raises the ordinary :class:`AttributeError`.
    """
    entry = RENAMED.get(f"{module}.{name}")
    if entry is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    target_module, _, attribute = entry.target.partition(":")
    value = getattr(importlib.import_module(target_module), attribute)
    _warn(f"{module}.{name}", entry.use)
    return value
