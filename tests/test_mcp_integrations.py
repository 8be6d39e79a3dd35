"""Every config in integrations/ works as pasted: it parses, names no model, and the command
it names serves tools over its transport against the real world-model server.

Placeholders (the project folder) are replaced by a temporary folder; `npx`
runs in the git-ignored .cache/node so it resolves the installed
server-filesystem package without the network; HTTP entries are served by
`aw-lookahead mcp --transport http` on a free port (the config's port is
rewritten to it). The only environment the test adds is the world-model
server's URL (configs rely on the default, where `aw-lookahead serve` listens).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters

from mcp_support import start_http

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = sorted(
    p for p in (ROOT / "integrations").rglob("*.json") if p.parent.name != "integrations"
)
PLACEHOLDERS = ("${workspaceFolder}", "/ABSOLUTE/PATH/TO/PROJECT")


def pasted_env(spec: dict[str, Any], base_url: str) -> dict[str, str]:
    """The client's environment: ours minus any aw-lookahead setting, plus the config's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AW_LOOKAHEAD_")}
    env.update(spec.get("env", {}))
    env.setdefault("AW_LOOKAHEAD_BASE_URL", base_url)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


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


@pytest.mark.parametrize(("config", "name", "spec"), entries(), ids=lambda v: str(v)[:40])
def test_no_config_pins_a_model(config: str, name: str, spec: dict[str, Any]) -> None:
    assert "AW_LOOKAHEAD_MODEL" not in spec.get("env", {}), (config, name)
    assert "--model" not in spec.get("args", []), (config, name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_mcp_http(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    bin_dir = Path(sys.executable).parent
    args = [f"{bin_dir}/aw-lookahead", "mcp", "--transport", "http", "--port", str(port)]
    return start_http(args, env, log)


@pytest.mark.parametrize(("config", "name", "spec"), entries(), ids=lambda v: str(v)[:40])
async def test_config_entry_lists_tools(
    config: str,
    name: str,
    spec: dict[str, Any],
    tmp_path: Path,
    mcp_fs_server: Path,
    vllm_server: Any,
) -> None:
    env = pasted_env(spec, vllm_server.base_url)
    if "url" in spec:
        port = _free_port()
        url = spec["url"].replace(":8808/", f":{port}/")
        proc = start_mcp_http(port, env, tmp_path / "http.log")
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


async def test_pasted_mcp_entry_simulates_with_the_served_model(vllm_server: Any) -> None:
    """No model name in the config: the server's only model answers (not "model not served")."""
    path = ROOT / "integrations" / "cursor" / "mcp.json"
    spec = json.loads(path.read_text())["mcpServers"]["aw-lookahead"]
    params = StdioServerParameters(
        command=spec["command"],
        # the pasted model name is what is under test, not the machine's speed: a busy
        # machine may need more than the default 60 s for one prediction
        args=[*spec["args"], "--max-tokens", "48", "--timeout", "280"],
        env=pasted_env(spec, vllm_server.base_url),
    )
    async with Client(params, mode="legacy", read_timeout_seconds=300) as client:
        result = await client.call_tool("simulate", {"action": "ls /tmp", "domain": "terminal"})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["model"] == vllm_server.model


def test_wrong_project_path_fails_with_one_line(mcp_fs_server: Path, tmp_path: Path) -> None:
    """A placeholder left in the proxy entry: the proxy exits with one error line, no traceback."""
    path = ROOT / "integrations" / "claude-desktop" / "claude_desktop_config.json"
    spec = json.loads(path.read_text())["mcpServers"]["filesystem-gated"]
    assert "/ABSOLUTE/PATH/TO/PROJECT" in spec["args"]
    done = subprocess.run(
        [spec["command"], *spec["args"]],
        env=pasted_env(spec, "http://127.0.0.1:9/v1"),
        cwd=str(mcp_fs_server.parents[2]),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    ours = [line for line in done.stderr.splitlines() if line.startswith("aw-lookahead")]
    assert len(ours) == 1, done.stderr
    assert "did not start" in ours[0]
    assert "/ABSOLUTE/PATH/TO/PROJECT" in ours[0]
