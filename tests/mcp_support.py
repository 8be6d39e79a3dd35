"""Shared pieces of the MCP server tests: start a real ``aw-lookahead mcp`` HTTP server."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest


def start_http(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start an HTTP server command; return once it prints its URL (or fail with its log)."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(args, env=env, stdout=fh, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while "serving http://" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"server did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.05)
    return proc
