"""Which packaged prompt profile a served model was trained on.

A world model predicts best with the exact system prompt it was trained on,
so the client picks the profile from the served model name rather than
leaving it to the caller. The embedded model (served as
``smollm2-135m-instruct``, raw base or merged adapter alike) uses the profile
recorded in the shipped adapter's ``provenance.json`` (``prompt_profile``;
``"standard"`` when absent), so shipping an adapter trained on another
profile switches every client of this package with it. Every other model
gets ``"standard"``.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import cast

from .render import PROMPT_PROFILES, PromptProfile, PromptSet, profile_prompts

__all__ = [
    "EMBEDDED_SERVED_NAME",
    "SHIPPED_ADAPTER_DIR",
    "embedded_prompt_profile",
    "profile_for_model",
    "prompts_for_model",
]

EMBEDDED_SERVED_NAME = "smollm2-135m-instruct"
"""The served model name of the embedded model (also the base model's cache folder name)."""

SHIPPED_ADAPTER_DIR = Path(__file__).resolve().parent.parent / "embedded" / "adapter_weights"
"""The embedded model's shipped adapter folder (package data of :mod:`aw_lookahead.embedded`,
which sits above this layer; its provenance and calibration are read from here)."""
_PROVENANCE = SHIPPED_ADAPTER_DIR / "provenance.json"


@functools.cache
def embedded_prompt_profile() -> PromptProfile:
    """The profile the shipped embedded adapter was trained on (``provenance.json``)."""
    try:
        data = json.loads(_PROVENANCE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "standard"
    value = data.get("prompt_profile") if isinstance(data, dict) else None
    return cast(PromptProfile, value) if value in PROMPT_PROFILES else "standard"


def profile_for_model(model: str | None) -> PromptProfile:
    """The prompt profile of a served model name (or a model folder whose name is one)."""
    if not model:
        return "standard"
    name = Path(model).name if "/" in model else model
    if name == EMBEDDED_SERVED_NAME or name == EMBEDDED_SERVED_NAME + "-aw":
        return embedded_prompt_profile()
    return "standard"


def prompts_for_model(model: str | None) -> PromptSet:
    """The packaged prompt set a served model should be sent (see the module docstring)."""
    return profile_prompts(profile_for_model(model))
