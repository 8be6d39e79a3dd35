"""Old import paths, kept for one release: each warns and hands back the object from its new home.

A moved module leaves a stub at its old path whose module ``__getattr__``
calls :func:`moved_attribute`; a package that dropped a name from its surface
calls :func:`moved_name` from its own ``__getattr__``. Either way the caller
gets the very object the new path gives, with a :class:`DeprecationWarning`
that names the import to write instead. ``tests/test_public_api.py`` walks
both tables.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping
from typing import Any

__all__ = ["MOVED_MODULES", "moved_attribute", "moved_name"]

MOVED_MODULES: dict[str, str] = {
    "aw_lookahead.evaluation.masking": "aw_lookahead.evaluation.rules.masking",
    "aw_lookahead.evaluation.recording": "aw_lookahead.datagen.recording",
    "aw_lookahead.evaluation.reference_judge": "aw_lookahead.evaluation.judges.reference",
    "aw_lookahead.evaluation.rubric_judge": "aw_lookahead.evaluation.judges.rubric",
    "aw_lookahead.evaluation.verifier": "aw_lookahead.evaluation.rules.verifier",
}
"""Old module path -> the module that now holds everything it held."""

_STACK = 4  # _warn <- moved_attribute or moved_name <- the module __getattr__ <- the caller


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
