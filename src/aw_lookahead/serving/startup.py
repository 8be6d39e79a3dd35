"""Reading a starting server: how long to wait, what it is doing, why it failed.

Pure functions over the server's log text, kept apart from the process
handling of :mod:`.local`.
"""

from __future__ import annotations

import os
import re

from aw_lookahead.errors import ConfigError

__all__ = ["READY_TIMEOUT_ENV", "log_stage", "ready_timeout", "startup_cause"]

READY_TIMEOUT_ENV = "AW_LOOKAHEAD_READY_TIMEOUT"
"""Seconds a server may take to become ready (``make demo``, the tests, ``serve``)."""

_ERROR_LINE = re.compile(r"\b((?:[A-Za-z_][\w.]*)?(?:Error|Exception)): (\S.*)$")
_WRAPPER_ERRORS = ("root cause above", "initialization failed", "see the log")
# llama.cpp's own lines for a failed start, most telling first.
_NATIVE_CAUSES = (
    re.compile(r"\b(gguf_init\w*: .+)$"),
    re.compile(r"\berror loading model: (.+)$"),
    re.compile(r"\b(couldn't bind .+)$"),
    re.compile(r"\b(error: .+)$"),
)
_LOG_PREFIX = re.compile(
    r"^(?:\([^)]*\)\s*)?(?:INFO|WARNING|DEBUG)\s+\S+\s+\S+\s+(?:\[[^\]]*\]\s*)?"
)


def ready_timeout(default: float) -> float:
    """``$AW_LOOKAHEAD_READY_TIMEOUT`` when set (a busy machine needs longer), else ``default``."""
    raw = os.environ.get(READY_TIMEOUT_ENV, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value <= 0:
        raise ConfigError(f"{READY_TIMEOUT_ENV} must be a number of seconds > 0, got {raw!r}")
    return value


def startup_cause(log_text: str) -> str | None:
    """The error that stopped a server start, read from its log (``None`` when none is there).

    vLLM reports a failed start as a chain: the real cause (say ``ValueError:
    Available memory ... less than requested memory for kv``) and then wrapper
    errors that point back at it; the last error line that is not a wrapper wins.
    llama.cpp (C++, no exceptions in its log) says it the other way round: the
    first line naming the cause (``error loading model: ...``, ``couldn't bind
    ...``, ``error: ...``) comes before the ones that only say it stopped.
    """
    found: str | None = None
    for line in log_text.splitlines():
        m = _ERROR_LINE.search(line.strip())
        if m is None or any(w in m.group(2).lower() for w in _WRAPPER_ERRORS):
            continue
        found = f"{m.group(1)}: {m.group(2)}"
    if found is not None:
        return found
    for pattern in _NATIVE_CAUSES:
        for line in log_text.splitlines():
            m = pattern.search(line.strip())
            if m is not None:
                return m.group(1).strip()
    return None


def log_stage(log_text: str) -> str:
    """The last informative log line, without its level/time/source prefix."""
    for line in reversed(log_text.splitlines()):
        text = _LOG_PREFIX.sub("", line.strip()).strip()
        if text and "GET /" not in text:
            return text if len(text) <= 100 else text[:97] + "..."
    return "starting"
