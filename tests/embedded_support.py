"""Shared pieces of the embedded-model tests (conversion and adapter merge, run in children)."""

from __future__ import annotations

import importlib.util

import pytest


def needs_modules(names: tuple[str, ...], reason: str) -> pytest.MarkDecorator:
    """Skip unless every named module can be imported; ``reason`` says what to install."""
    return pytest.mark.skipif(
        any(importlib.util.find_spec(name) is None for name in names), reason=reason
    )


def counting_child(attr: str) -> str:
    """The head of a child script that counts real calls to ``embedded.<attr>`` in ``calls``.

    The script imports json, sys and time; the caller appends the body that runs and reports.
    """
    return f"""
import json, sys, time
from aw_lookahead.embedded import prepare as embedded
calls = []
real = embedded.{attr}
def counting(*args):
    calls.append(1)
    real(*args)
embedded.{attr} = counting
"""
