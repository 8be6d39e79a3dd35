"""The proxy against real third-party MCP servers (filesystem from npm, git from PyPI)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client, types

from aw_lookahead.mcp import (
    CONFIRM_ARG,
    Downstream,
    LookaheadProxy,
    Perturbation,
    ProxyConfig,
    ProxyMode,
)
from aw_lookahead.mcp._modes import DRYRUN_MARK, PLACEHOLDER_NOTE
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel, OpenAIWorldModel
from mcp_support import progress_gated_model

pytestmark = pytest.mark.integration


def fs_model(trajectory: Trajectory, action: Action) -> str:
    """Rule simulator: paths containing 'forbidden' fail, everything else succeeds."""
    assert isinstance(action, dict)
    if "forbidden" in json.dumps(action):
        return "Error: ENOENT: no such file or directory, open '.../forbidden/x.txt'"
    return f"Successfully ran {action['name']}"


def text(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


def proxy_for(cmd: list[str], mode: str = "gate", **kw: Any) -> LookaheadProxy:
    wm = kw.pop("world_model", None) or FunctionWorldModel(fs_model)
    return LookaheadProxy(Downstream(cmd), wm, ProxyConfig(mode=ProxyMode(mode), **kw))


async def test_gate_filesystem_vetoes_predicted_failure_and_passes_reads(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)])
    async with proxy, Client(proxy.server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["write_file"].annotations.destructive_hint is True  # unchanged
        assert tools["read_text_file"].output_schema is not None
        blocked = await client.call_tool(
            "write_file", {"path": str(tmp_path / "forbidden.txt"), "content": "x"}
        )
        read = await client.call_tool("read_text_file", {"path": str(tmp_path / "notes.txt")})
        allowed = await client.call_tool(
            "write_file", {"path": str(tmp_path / "ok.txt"), "content": "fine"}
        )
    assert blocked.is_error
    assert "Blocked before execution" in text(blocked)
    assert "ENOENT" in text(blocked)
    assert not (tmp_path / "forbidden.txt").exists()  # never reached the server
    assert not read.is_error
    assert read.structured_content == {"content": "hello"}
    assert not allowed.is_error
    assert (tmp_path / "ok.txt").read_text() == "fine"
    assert proxy.downstream.forwarded == 2
    assert proxy.stats["vetoed"] == 1
    assert proxy.stats["simulated"] == 2  # the read-only call was not simulated


def git_repo(path: Path) -> Path:
    run = lambda *a: subprocess.run(["git", "-C", str(path), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    run("config", "user.email", "t@example.com")
    run("config", "user.name", "t")
    (path / "a.txt").write_text("one\n")
    run("add", "a.txt")
    run("commit", "-qm", "first")
    (path / "a.txt").write_text("two\n")
    run("add", "a.txt")
    return path


async def test_gate_git_blocks_destructive_call(mcp_git_server: Path, tmp_path: Path) -> None:
    repo = git_repo(tmp_path)

    def model(trajectory: Trajectory, action: Action) -> str:
        if isinstance(action, dict) and action["name"] == "git_reset":
            return "Error: refusing to discard staged changes"
        return "ok"

    cmd = [str(mcp_git_server), "--repository", str(repo)]
    proxy = proxy_for(cmd, world_model=FunctionWorldModel(model))
    async with proxy, Client(proxy.server) as client:
        status = await client.call_tool("git_status", {"repo_path": str(repo)})
        reset = await client.call_tool("git_reset", {"repo_path": str(repo)})
    assert not status.is_error
    assert "a.txt" in text(status)
    assert reset.is_error
    assert "NOT executed" in text(reset)
    assert staged_files(repo) == "a.txt"  # the reset never ran
    assert proxy.downstream.forwarded == 1


def staged_files(repo: Path) -> str:
    args = ["git", "-C", str(repo), "diff", "--cached", "--name-only"]
    return subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


async def test_dryrun_never_touches_downstream(mcp_fs_server: Path, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("original")
    before = snapshot(tmp_path)
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "dryrun")
    async with proxy, Client(proxy.server) as client:
        results = []
        for i in range(20):
            name, args = [
                ("write_file", {"path": str(tmp_path / f"new{i}.txt"), "content": "x"}),
                ("edit_file", {"path": str(tmp_path / "keep.txt"), "edits": [], "dryRun": False}),
                ("move_file", {"source": str(tmp_path / "keep.txt"), "destination": "/tmp/z"}),
                ("read_text_file", {"path": str(tmp_path / "forbidden" / "x.txt")}),
            ][i % 4]
            results.append(await client.call_tool(name, args))
    assert snapshot(tmp_path) == before
    assert proxy.downstream.forwarded == 0
    ok = [r for r in results if not r.is_error]
    assert len(ok) == 15
    assert all(r.structured_content is not None for r in ok)
    marked = [r for r in results if r.content and r.content[0].text.startswith(DRYRUN_MARK)]  # type: ignore[union-attr]
    assert len(marked) == 20  # every result says it was simulated, errors too
    assert sum(r.is_error for r in results) == 5  # the simulated ENOENT reads


async def test_dryrun_says_when_structured_content_is_only_a_placeholder(
    mcp_memory_server: Path,
) -> None:
    """The memory server's outputs have no string field for the predicted text to go in."""
    entity = {"name": "Ada", "entityType": "person", "observations": []}
    created = json.dumps({"entities": [entity]})

    def memory_model(trajectory: Trajectory, action: Action) -> str:
        assert isinstance(action, dict)
        return created if action["arguments"].get("json") else "Created the entity Ada."

    proxy = proxy_for(
        [str(mcp_memory_server)], "dryrun", world_model=FunctionWorldModel(memory_model)
    )
    async with proxy, Client(proxy.server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["create_entities"].output_schema is not None
        plain = await client.call_tool("create_entities", {"entities": [entity]})
        fitted = await client.call_tool("create_entities", {"entities": [entity], "json": 1})
    assert not plain.is_error, text(plain)
    first_line, _, rest = text(plain).partition("\n")
    assert first_line == f"{DRYRUN_MARK} {PLACEHOLDER_NOTE}"
    assert rest == "Created the entity Ada."
    # A prediction that is itself schema-valid JSON is the structured content: no note.
    assert fitted.structured_content == json.loads(created)
    assert text(fitted).partition("\n")[0] == DRYRUN_MARK
    assert proxy.downstream.forwarded == 0


async def test_dryrun_perturbation_is_deterministic(mcp_fs_server: Path, tmp_path: Path) -> None:
    spec = Perturbation.parse("seed=3,error=0.3,truncate=0.5,truncate_chars=5")

    async def run_once() -> list[tuple[bool, str]]:
        proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "dryrun", perturb=spec)
        async with proxy, Client(proxy.server) as client:
            out = []
            for i in range(12):
                r = await client.call_tool("list_directory", {"path": f"{tmp_path}/d{i}"})
                out.append((bool(r.is_error), text(r)))
            return out

    first, second = await run_once(), await run_once()
    assert first == second
    assert any(err and "fault injected" in t for err, t in first)
    assert any(t.endswith("[output truncated]") for _, t in first)
    assert any(not err and "truncated" not in t for err, t in first)


async def test_downstream_killed_mid_session_recovers(mcp_fs_server: Path, tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    root = tmp_path / "root"
    root.mkdir()
    cmd = ["sh", "-c", f'echo $$ > {pidfile}; exec "{mcp_fs_server}" "{root}"']
    proxy = proxy_for(cmd)
    async with proxy, Client(proxy.server) as client:
        first = await client.call_tool("list_directory", {"path": str(root)})
        os.kill(int(pidfile.read_text()), signal.SIGKILL)
        crashed = await client.call_tool(
            "write_file", {"path": str(root / "a.txt"), "content": "1"}
        )
        after = await client.call_tool("write_file", {"path": str(root / "b.txt"), "content": "2"})
    assert not first.is_error
    assert crashed.is_error
    assert "downstream MCP server" in text(crashed)
    assert "NOT retried" in text(crashed)
    assert not after.is_error
    assert (root / "b.txt").read_text() == "2"
    assert proxy.downstream.restarts >= 1
    assert proxy.downstream.forwarded == 3


async def test_preview_confirmation_token_is_single_use(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    target = tmp_path / "p.txt"
    args = {"path": str(target), "content": "confirmed"}
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "preview")
    async with proxy, Client(proxy.server) as client:
        preview = await client.call_tool("write_file", args)
        assert preview.is_error
        assert "PREVIEW ONLY" in text(preview)
        assert not target.exists()
        token = (preview.meta or {})["io.github.aw-lookahead/decision"]["confirm_token"]
        other = await client.call_tool("write_file", {**args, "content": "x", CONFIRM_ARG: token})
        assert other.is_error
        assert not target.exists()
        preview = await client.call_tool("write_file", args)
        token = (preview.meta or {})["io.github.aw-lookahead/decision"]["confirm_token"]
        done = await client.call_tool("write_file", {**args, CONFIRM_ARG: token})
        again = await client.call_tool("write_file", {**args, CONFIRM_ARG: token})
    assert not done.is_error
    assert target.read_text() == "confirmed"
    assert again.is_error
    assert "unknown, used or expired" in text(again)
    assert proxy.downstream.forwarded == 1


async def test_preview_runs_tools_annotated_read_only_without_asking(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "preview")
    async with proxy, Client(proxy.server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["read_text_file"].annotations.read_only_hint is True  # type: ignore[union-attr]
        read = await client.call_tool("read_text_file", {"path": str(tmp_path / "notes.txt")})
        write = await client.call_tool(
            "write_file", {"path": str(tmp_path / "w.txt"), "content": "x"}
        )
    assert not read.is_error
    assert "hello" in text(read)
    assert "PREVIEW ONLY" in text(write)
    assert proxy.downstream.forwarded == 1


async def test_preview_uses_elicitation_when_supported(mcp_fs_server: Path, tmp_path: Path) -> None:
    asked: list[str] = []

    async def elicit(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        ok = "yes.txt" in params.message
        return types.ElicitResult(action="accept", content={"confirm": ok})

    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], "preview")
    async with proxy, Client(proxy.server, mode="legacy", elicitation_callback=elicit) as client:
        yes = await client.call_tool(
            "write_file", {"path": str(tmp_path / "yes.txt"), "content": "y"}
        )
        no = await client.call_tool(
            "write_file", {"path": str(tmp_path / "no.txt"), "content": "n"}
        )
    assert len(asked) == 2
    assert "Predicted result" in asked[0]
    assert not yes.is_error
    assert (tmp_path / "yes.txt").exists()
    assert no.is_error
    assert not (tmp_path / "no.txt").exists()


async def test_shadow_logs_prediction_and_real_result(mcp_fs_server: Path, tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "shadow.jsonl"
    proxy = proxy_for([str(mcp_fs_server), str(root)], "shadow", shadow_log=log)
    async with proxy, Client(proxy.server) as client:
        real = await client.call_tool("write_file", {"path": str(root / "s.txt"), "content": "s"})
        await client.call_tool("read_text_file", {"path": str(root / "missing.txt")})
    assert not real.is_error
    assert (root / "s.txt").exists()
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["action"]["name"] for r in records] == ["write_file", "read_text_file"]
    assert records[0]["predicted"] == "Successfully ran write_file"
    assert records[0]["real"].startswith("Successfully wrote")
    assert 0.0 <= records[0]["divergence"] <= 1.0
    assert records[1]["real_is_error"] is True
    assert records[1]["outcome_agrees"] is False


async def test_gate_with_the_real_world_model(
    mcp_fs_server: Path, tmp_path: Path, vllm_server: Any
) -> None:
    wm = OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=64,
        timeout=600,  # generous: a busy CPU server must not turn this into a timeout test
    )
    target = tmp_path / "real.txt"
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], world_model=wm)
    async with wm, proxy, Client(proxy.server) as client:
        result = await client.call_tool("write_file", {"path": str(target), "content": "r"})
    decision = (result.meta or {})["io.github.aw-lookahead/decision"]
    assert proxy.engine.deadline_s > wm.timeout  # the deadline follows the client timeout
    # Holds whatever the machine's speed: simulated -> executed or vetoed on the prediction;
    # not simulated in time -> write_file may destroy data, so fail_safe blocks it.
    if decision["predicted_observation"] is None:
        assert decision["kind"] == "veto"
        assert "could not be checked" in decision["reason"]
    else:
        assert decision["kind"] in {"execute", "veto"}
    assert target.exists() == (decision["kind"] == "execute") == (not result.is_error)
    assert proxy.downstream.forwarded == (1 if target.exists() else 0)


async def test_gate_write_after_ten_calls_fits_the_embedded_context(
    mcp_fs_server: Path, tmp_path: Path, vllm_server: Any
) -> None:
    """Compact tool context: ten real calls of history still leave room to simulate a write."""
    for i in range(4):
        (tmp_path / f"mod_{i}.py").write_text(
            "\n".join(f"def f_{i}_{j}(x):\n    return x * {j}\n" for j in range(8))
        )
    wm = OpenAIWorldModel(
        vllm_server.model,
        base_url=vllm_server.base_url,
        api_key=vllm_server.api_key,
        max_tokens=1024,  # the CLI default: 3,072 prompt tokens left on a 4,096 context
        timeout=1800,  # 1,024 generated tokens at load 8-12 took over 300 s; a hint, not a check
    )
    root = str(tmp_path)
    reads: list[tuple[str, dict[str, Any]]] = [
        ("list_allowed_directories", {}),
        ("list_directory", {"path": root}),
        *[("read_text_file", {"path": f"{root}/mod_{i}.py"}) for i in range(4)],
        ("search_files", {"path": root, "pattern": "*.py"}),
        ("get_file_info", {"path": f"{root}/mod_0.py"}),
        ("read_text_file", {"path": f"{root}/mod_1.py", "head": 5}),
        ("directory_tree", {"path": root}),
    ]
    proxy = proxy_for([str(mcp_fs_server), root], world_model=wm, deadline_s=1800)
    async with wm, proxy, Client(proxy.server) as client:
        for name, args in reads:
            assert not (await client.call_tool(name, args)).is_error, name
        result = await client.call_tool("write_file", {"path": f"{root}/w.txt", "content": "w"})
    decision = (result.meta or {})["io.github.aw-lookahead/decision"]
    assert decision["kind"] in {"execute", "veto"}, decision
    assert isinstance(decision["predicted_observation"], str)
    assert 0 < decision["prompt_tokens"] <= 4096 - 1024
    assert proxy.stats["simulated"] == 1
    assert proxy.downstream.forwarded == 10 + (decision["kind"] == "execute")


@pytest.mark.parametrize("mode", ["gate", "preview", "dryrun"])
async def test_every_mode_reports_progress_while_it_waits(
    mcp_fs_server: Path, tmp_path: Path, mode: str
) -> None:
    """The model answers only after two progress notifications reached the client.

    (Shadow mode never waits on the model; its forwarded calls report progress the same way.)
    """
    wm, on_progress, seen = progress_gated_model("Successfully wrote to the file")
    proxy = proxy_for([str(mcp_fs_server), str(tmp_path)], mode, world_model=wm)
    args = {"path": str(tmp_path / "p.txt"), "content": "x"}
    async with proxy, Client(proxy.server) as client:
        result = await client.call_tool("write_file", args, progress_callback=on_progress)
    assert len(seen) >= 2
    assert seen == sorted(set(seen))
    assert result.is_error == (mode == "preview")  # preview waits for a confirmation


async def test_shadow_writes_every_completed_pair_when_the_proxy_stops(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    """The client leaves before the prediction comes: the pair is written with predicted null."""
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "shadow.jsonl"
    never = anyio.Event()

    async def stuck(trajectory: Trajectory, action: Action) -> str:
        await never.wait()
        return "never"

    proxy = proxy_for(
        [str(mcp_fs_server), str(root)],
        "shadow",
        world_model=FunctionWorldModel(stuck),
        shadow_log=log,
        shadow_flush_s=0.2,
    )
    async with proxy, Client(proxy.server) as client:
        real = await client.call_tool("write_file", {"path": str(root / "s.txt"), "content": "s"})
    assert not real.is_error
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["action"]["name"] == "write_file"
    assert record["real"].startswith("Successfully wrote")
    assert record["predicted"] is None
    assert "no prediction" in record["predicted_error"]
    assert record["divergence"] is None


def test_shadow_pair_survives_a_client_that_closes_right_after(
    mcp_fs_server: Path, tmp_path: Path
) -> None:
    """The real CLI over stdio, a world model that never answers, a client that leaves at once.

    The client closes stdin and (the Python SDK's way) SIGTERMs the proxy two seconds later;
    the pair of the last call is in the log either way.
    """
    import socket
    import sys
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    root = tmp_path / "root"
    root.mkdir()
    log = tmp_path / "shadow.jsonl"
    aw = str(Path(sys.executable).with_name("aw-lookahead"))
    cmd = [aw, "proxy", "--mode", "shadow", "--shadow-log", str(log), "--model", "m"]
    cmd += ["--base-url", base_url, "--", str(mcp_fs_server), str(root)]

    async def session() -> Any:
        from mcp import StdioServerParameters

        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
        async with Client(params, mode="legacy") as client:
            return await client.call_tool(
                "write_file", {"path": str(root / "s.txt"), "content": "s"}
            )

    try:
        real = anyio.run(session)
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert not real.is_error
    [record] = [json.loads(line) for line in log.read_text().splitlines()]
    assert record["real"].startswith("Successfully wrote")
    assert record["predicted"] is None
    assert "no prediction" in record["predicted_error"]
