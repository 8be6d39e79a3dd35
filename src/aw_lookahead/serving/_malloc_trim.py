"""Give freed heap pages back to the system in the embedded vLLM server's processes.

vLLM copies the model's weights into the CPU kernels' packed layout while it loads and
frees the originals; glibc keeps those holes in the heap: 100-200 MiB of the embedded
server's memory (right after requests and idle). ``malloc_trim(0)`` returns them without
the per-request page faults that lower malloc thresholds cost (docs/serving.md has the
measurements).

:func:`register` is a vLLM general plugin (entry point group ``vllm.general_plugins``),
which vLLM loads in its API server and in its engine process where it has one (started
with ``spawn``: vLLM's CPU platform always uses it; the embedded server has none, its
engine runs in the API server's process). It does nothing unless
``AW_LOOKAHEAD_MALLOC_TRIM_S`` holds a positive number of seconds, which the embedded
server's environment sets; then each process gets one daemon thread, named
``aw-malloc-trim`` at the OS level, that trims the heap at that period. Other vLLM
servers on the same machine are not affected.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time

from ._os_thread import name_os_thread

__all__ = ["PERIOD_ENV", "THREAD_NAME", "register"]

PERIOD_ENV = "AW_LOOKAHEAD_MALLOC_TRIM_S"
THREAD_NAME = "aw-malloc-trim"
_started_in: set[int] = set()
_lock = threading.Lock()


def _period() -> float | None:
    try:
        period = float(os.environ.get(PERIOD_ENV, ""))
    except ValueError:
        return None
    return period if period > 0 else None


def _libc() -> ctypes.CDLL | None:
    """The C library's symbols as this process has them; None without glibc's ``malloc_trim``."""
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "prctl") else None


def _trim_forever(libc: ctypes.CDLL, period: float) -> None:
    name_os_thread(THREAD_NAME)
    while True:
        time.sleep(period)
        libc.malloc_trim(0)


def register() -> None:
    """Start the trimming thread in this process if the environment asks for one.

    Idempotent per process: vLLM may load its plugins more than once. A child process
    starts its own thread when it loads them (a forked one inherits the record of its
    parent's thread but not the thread, hence the record is kept per process id)."""
    period = _period()
    if period is None:
        return
    with _lock:
        if os.getpid() in _started_in:
            return
        libc = _libc()
        if libc is None:
            return
        threading.Thread(
            target=_trim_forever, args=(libc, period), name=THREAD_NAME, daemon=True
        ).start()
        _started_in.add(os.getpid())
