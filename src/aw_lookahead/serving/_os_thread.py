"""Name a thread at the OS level, so that ``/proc/PID/task/*/comm`` (and ``top -H``) tells
this package's threads inside a vLLM server apart from vLLM's own."""

from __future__ import annotations

import contextlib
import ctypes

__all__ = ["name_os_thread"]

_PR_SET_NAME = 15


def name_os_thread(name: str) -> None:
    """Give the calling thread ``name`` (its first 15 bytes: the kernel's limit) where the
    C library has ``prctl`` (Linux); elsewhere do nothing."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)
