"""The proxy mirrors the downstream faithfully: capabilities, version, roots, list changes.

Real servers only: the filesystem server from npm (roots-aware, declares
``tools.listChanged``) and a small ``MCPServer`` subprocess that grows a tool
on request and announces it.
"""

from __future__ import annotations

import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, types

from aw_lookahead import __version__
from aw_lookahead.errors import DownstreamError
from aw_lookahead.mcp import CONFIRM_ARG, Downstream, LookaheadProxy, ProxyConfig, ProxyMode
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

pytestmark = pytest.mark.integration


def ok_model(trajectory: Trajectory, action: Action) -> str:
    return "ok"


def proxy_for(cmd: list[str], mode: str = "gate") -> LookaheadProxy:
    return LookaheadProxy(
        Downstream(cmd), FunctionWorldModel(ok_model), ProxyConfig(mode=ProxyMode(mode))
    )


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def test_server_info_and_list_changed_mirror_the_downstream(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "preview")
    async with proxy, Client(proxy.server, mode="legacy") as client:
        info = client.session.initialize_result
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert info is not None
    assert info.server_info.version == __version__
    assert proxy.downstream.tools_list_changed is True  # what the filesystem server declares
    assert info.capabilities.tools is not None
    assert info.capabilities.tools.list_changed is True
    schema = tools["write_file"].input_schema
    assert schema["properties"][CONFIRM_ARG]["type"] == "string"
    assert CONFIRM_ARG not in schema.get("required", [])
    assert schema["required"] == ["path", "content"]


async def allowed_directories(client: Client) -> str:
    return text(await client.call_tool("list_allowed_directories", {}))


@pytest.mark.parametrize("through_proxy", [False, True])
async def test_client_roots_narrow_the_filesystem_server(
    mcp_fs_server: Path, tmp_path: Path, through_proxy: bool
) -> None:
    """Roots [root/sub] from the client: only sub is allowed, with or without the proxy."""
    root = real(tmp_path / "root")
    sub = root / "sub"
    sub.mkdir(parents=True)
    (root / "outside.txt").write_text("secret")
    (sub / "inside.txt").write_text("fine")

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=sub.as_uri(), name="sub")])

    cmd = [str(mcp_fs_server), str(root)]
    proxy = proxy_for(cmd)
    target: Any = proxy.server if through_proxy else types_stdio(cmd)
    async with AsyncExitStack() as stack:
        if through_proxy:
            await stack.enter_async_context(proxy)
        c = await stack.enter_async_context(
            Client(target, mode="legacy", list_roots_callback=roots)
        )
        # The server applies roots asynchronously after it reads them (also without the
        # proxy), so wait until the configured directory is no longer listed.
        with anyio.fail_after(60):
            while f"{root}\n" in (await allowed_directories(c)) + "\n":  # noqa: ASYNC110
                await anyio.sleep(0.05)
        allowed = await allowed_directories(c)
        inside = await c.call_tool("read_text_file", {"path": str(sub / "inside.txt")})
        outside = await c.call_tool("read_text_file", {"path": str(root / "outside.txt")})
    assert str(sub) in allowed
    assert f"{root}\n" not in allowed + "\n"
    assert not inside.is_error
    assert outside.is_error
    assert "secret" not in text(outside)


def real(path: Path) -> Path:
    return path.resolve()


def types_stdio(cmd: list[str]) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=cmd[0], args=cmd[1:])


async def test_a_client_without_roots_keeps_the_configured_directories(
    mcp_fs_server: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    root = real(tmp_path)
    proxy = proxy_for([str(mcp_fs_server), str(root)])
    async with proxy, Client(proxy.server, mode="legacy") as client:
        allowed = await allowed_directories(client)
    assert str(root) in allowed
    # The server's report of our "no roots" answer is expected, not an error to print.
    err = capfd.readouterr().err
    assert "-32600" not in err
    assert "roots" not in err.lower()


GROWING = r"""
from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("growing")


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    '''Add a tool called `name` and announce the new list.'''

    async def added() -> str:
        return "I am new"

    server.add_tool(added, name=name, description="added at run time")
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


server.run()
"""


async def test_tool_list_changes_reach_the_client(tmp_path: Path) -> None:
    script = tmp_path / "growing.py"
    script.write_text(GROWING)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    proxy = proxy_for([sys.executable, str(script)], "shadow")
    proxy.config.shadow_log = None
    async with proxy, Client(proxy.server, mode="legacy", message_handler=on_message) as client:
        before = {t.name for t in (await client.list_tools()).tools}
        await client.call_tool("grow", {"name": "sprout"})
        with anyio.fail_after(60):
            await changed.wait()
        after = {t.name for t in (await client.list_tools()).tools}
    assert before == {"grow"}
    assert after == {"grow", "sprout"}


async def test_a_downstream_that_cannot_start_is_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    script = tmp_path / "dies.py"
    script.write_text(f"import sys\nprint('cannot open {missing}', file=sys.stderr)\nsys.exit(3)\n")
    proxy = proxy_for([sys.executable, str(script)])
    with pytest.raises(DownstreamError) as info:
        async with proxy:
            pass
    message = str(info.value)
    assert "did not start" in message
    assert f"cannot open {missing}" in message
    assert "\n" not in message
