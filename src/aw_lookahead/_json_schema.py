"""Whether a value matches a JSON Schema, answered only when it can be checked.

``jsonschema`` comes with the ``mcp`` extra, not the core install; without
it (or with a schema it cannot use) the answer is ``False``: callers act on
a match only, so what cannot be checked never counts as one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

__all__ = ["matches_schema"]


def matches_schema(value: Any, schema: Any) -> bool:
    """``True`` when ``schema`` is a usable JSON Schema and ``value`` is valid under it."""
    if not isinstance(schema, Mapping):
        return False
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError:
        return False
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls(schema).validate(value)
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return False
    return True
