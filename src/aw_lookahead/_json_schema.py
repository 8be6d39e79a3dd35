"""Whether a value matches a JSON Schema, answered only when it can be checked.

``jsonschema`` comes with the ``mcp`` extra, not the core install; without
it (or with a schema it cannot use) the answer is ``False``: callers act on
a match only, so what cannot be checked never counts as one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["jsonschema_module", "matches_schema"]


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
