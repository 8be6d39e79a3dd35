"""Shared pieces of the MCP tests: start a real ``aw-lookahead mcp`` HTTP server; a world
model that waits for the client's progress notifications."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

OnProgress = Callable[[float, float | None, str | None], Awaitable[None]]


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
"""What a streamable-HTTP MCP client sends with each POST."""


def initialize_request(client: str) -> dict[str, Any]:
    """A raw JSON-RPC ``initialize`` from a client named ``client`` (for tests over raw HTTP)."""
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    }


def echo(trajectory: Trajectory, action: Action) -> str:
    """A world model that predicts ``ok`` for everything."""
    return "ok"


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


def progress_gated_model(
    observation: str = "meeting at 10:00",
) -> tuple[FunctionWorldModel, OnProgress, list[float]]:
    """A world model that answers only after the client has seen two progress notifications.

    Returns the model, the client's ``progress_callback`` and the progress values it saw.
    """
    seen: list[float] = []
    enough = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        if len(seen) >= 2:
            enough.set()

    async def model(trajectory: Trajectory, action: Action) -> str:
        with anyio.fail_after(120):  # a missing notification fails the test, never hangs it
            await enough.wait()
        return observation

    return FunctionWorldModel(model), on_progress, seen
