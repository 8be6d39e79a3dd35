"""Every config in integrations/ parses, and the command it names serves tools over its transport.

Placeholders (the project folder) are replaced by a temporary folder; `npx`
runs in the git-ignored .cache/node so it resolves the installed
server-filesystem package without the network; HTTP entries are served by
`aw-lookahead mcp --transport http` on a free port (the config's port is
rewritten to it).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted(
    p for p in (ROOT / "integrations").rglob("*.json") if p.parent.name != "integrations"
)
PLACEHOLDERS = ("${workspaceFolder}", "/ABSOLUTE/PATH/TO/PROJECT")
DEAD_MODEL = {"AW_LOOKAHEAD_BASE_URL": "http://127.0.0.1:9/v1", "AW_LOOKAHEAD_MODEL": "m"}


def entries() -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for path in CONFIGS:
        data = json.loads(path.read_text())
        servers = data.get("mcpServers") or data.get("servers")
        assert servers, f"{path}: no mcpServers/servers"
        out += [(str(path.relative_to(ROOT)), name, spec) for name, spec in servers.items()]
    return out


def test_every_client_has_a_config_and_readme() -> None:
    for client in ("claude-code", "cursor", "vscode", "claude-desktop"):
        folder = ROOT / "integrations" / client
        assert (folder / "README.md").exists()
        assert any(folder.glob("*.json")) or any(folder.glob(".*.json"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    bin_dir = Path(sys.executable).parent
    args = [f"{bin_dir}/aw-lookahead", "mcp", "--transport", "http", "--port", str(port)]
    with log.open("wb") as fh:
        proc = subprocess.Popen(args, env=env, stdout=fh, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "serving http://" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(log.read_text(errors="replace")[-3000:])
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize(("config", "name", "spec"), entries(), ids=lambda v: str(v)[:40])
async def test_config_entry_lists_tools(
    config: str, name: str, spec: dict[str, Any], tmp_path: Path, mcp_fs_server: Path
) -> None:
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, **spec.get("env", {}), **DEAD_MODEL}
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    if "url" in spec:
        port = _free_port()
        url = spec["url"].replace(":8808/", f":{port}/")
        proc = start_http(port, env, tmp_path / "http.log")
        try:
            async with Client(url, mode="legacy") as client:
                tools = (await client.list_tools()).tools
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    else:
        args = [tmp_path.as_posix() if a in PLACEHOLDERS or a == "." else a for a in spec["args"]]
        params = StdioServerParameters(
            command=spec["command"], args=args, env=env, cwd=str(mcp_fs_server.parents[2])
        )
        async with Client(params, mode="legacy", read_timeout_seconds=90) as client:
            tools = (await client.list_tools()).tools
    names = {t.name for t in tools}
    expected = (
        {"read_text_file", "write_file"}
        if "proxy" in spec.get("args", [])
        else {"simulate", "lookahead"}
    )
    assert expected <= names, (config, name, names)
