"""Shared pieces of the ``aw-lookahead serve`` tests: run it as a user does, read its lines,
check what it left behind."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

SERVE = [sys.executable, "-c", "from aw_lookahead.cli import console_main; console_main()", "serve"]


def pump(stream: IO[str] | None, into: queue.Queue[str]) -> None:
    """Put each line of ``stream`` into ``into``, then "" once it ends."""
    for line in stream or ():
        into.put(line)
    into.put("")


def read_lines(proc: subprocess.Popen[str]) -> tuple[queue.Queue[str], queue.Queue[str]]:
    """Queues that receive ``proc``'s stdout and stderr lines ("" once a stream ends)."""
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    for stream, into in ((proc.stdout, out), (proc.stderr, err)):
        threading.Thread(target=pump, args=(stream, into), daemon=True).start()
    return out, err


def next_json(lines: queue.Queue[str], deadline: float) -> dict[str, Any]:
    """The next line that is a JSON object (``serve --json``'s ready line)."""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError("serve printed no ready line before the deadline")
        line = lines.get(timeout=left)
        if line == "":
            raise AssertionError("serve exited before it was ready")
        if line.startswith("{"):
            return dict(json.loads(line))


def alive(pid: int) -> bool:
    """True while ``pid`` is a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def listening(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:``port`` (a port left in
    TIME_WAIT by closed connections is not listening, though it may not be bindable yet)."""
    with socket.socket() as sock:
        sock.settimeout(5.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0
