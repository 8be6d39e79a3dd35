"""MCP training data recorded from real MCP servers over real stdio sessions.

Three servers are driven: ``@modelcontextprotocol/server-filesystem`` (npm),
``mcp-server-git`` (PyPI) and ``@modelcontextprotocol/server-memory`` (npm).
Trajectory ``i`` of seed ``s`` gets its template family round-robin from a
seeded order, its own random generator and its own fresh directory
``<workdir>/<name>-<i>``; the family plans 2-6 calls (valid ones and
deliberate mistakes: missing files, paths outside the allowed directory,
schema violations, unknown tools, bad refs), and each call's real result
becomes the observation text exactly as the proxy records it
(:func:`aw_lookahead.mcp.results.result_text`).

Guarantees:

* Each trajectory holds the server's full tool list as listed (``tools``),
  actions ``{"name", "arguments"}`` and ``metadata["family"]``.
* Same seed, same ``workdir`` -> the same trajectories, except families marked
  ``deterministic=False`` (``fs.file_info`` shows kernel-set times).
* The filesystem and git servers are confined to the trajectory's directory,
  so each trajectory starts its own (they take their confinement at start);
  one memory server per worker is reused, its graph file emptied per trajectory.

:func:`generate_mcp` is async; :func:`generate_mcp_sync` is its blocking twin.
"""

from __future__ import annotations

import fcntl
import os
import random
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio

from aw_lookahead._progress import ProgressCallback
from aw_lookahead._sync import own_loop_twin
from aw_lookahead.datagen.split import DatasetManifest, split_families, write_split
from aw_lookahead.errors import ConfigError, DownstreamError
from aw_lookahead.trajectory import Trajectory, Turn

from .content import WORKSPACES
from .families.fs import FS_FAMILIES, make_fs_workspace
from .families.git import GIT_FAMILIES, git_env, make_git_workspace
from .families.memory import MEMORY_FAMILIES, MemoryWorkspace
from .servers import FILESYSTEM_PACKAGE, MEMORY_PACKAGE, git_mcp_server, npm_mcp_server
from .session import Family, ServerSession, open_session, pick

__all__ = [
    "MCP_FAMILIES",
    "MCP_SERVERS",
    "families_for",
    "generate_mcp",
    "generate_mcp_sync",
    "record_mcp",
]

MCP_SERVERS: tuple[str, ...] = ("filesystem", "git", "memory")
MCP_FAMILIES: tuple[Family, ...] = (*FS_FAMILIES, *GIT_FAMILIES, *MEMORY_FAMILIES)
MAX_CALLS = 6
Progress = ProgressCallback


def families_for(servers: Sequence[str]) -> list[Family]:
    """The families of the given servers; an unknown server name is a :class:`ConfigError`."""
    unknown = sorted(set(servers) - set(MCP_SERVERS))
    if unknown or not list(servers):
        raise ConfigError(
            f"unknown MCP server {', '.join(unknown) or '(none)'}; "
            f"choose from: {', '.join(MCP_SERVERS)}"
        )
    return [f for f in MCP_FAMILIES if f.server in servers]


def _default_workdir() -> Path:
    return Path(tempfile.gettempdir()) / "aw-lookahead-mcp"


class _Worker:
    """One worker: records trajectories one at a time, reusing its memory server."""

    def __init__(
        self, slot: int, workdir: Path, commands: dict[str, list[str]], errlog: TextIO
    ) -> None:
        self.workdir = workdir
        self.graph_file = workdir / f".memory-{slot}.jsonl"
        self._commands = commands
        self._errlog = errlog
        self._stack = AsyncExitStack()
        self._memory: ServerSession | None = None

    async def _memory_session(self) -> ServerSession:
        if self._memory is None:
            env = {"MEMORY_FILE_PATH": str(self.graph_file), "PATH": os.environ.get("PATH", "")}
            cm = open_session(self._commands["memory"], env=env, errlog=self._errlog)
            self._memory = await self._stack.enter_async_context(cm)
        return self._memory

    async def aclose(self) -> None:
        await self._stack.aclose()

    async def record(self, index: int, family: Family, seed: int) -> Trajectory:
        """Trajectory ``index``: a fresh directory, the family's plan, the real results."""
        rng = random.Random(f"aw-mcp:{seed}:{index}")
        root = self.workdir / f"{pick(rng, WORKSPACES)}-{index}"
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        try:
            async with AsyncExitStack() as stack:
                ws: Any
                if family.server == "filesystem":
                    ws = make_fs_workspace(root, rng)
                    command = [*self._commands["filesystem"], str(root)]
                    cm = open_session(command, errlog=self._errlog)
                    session = await stack.enter_async_context(cm)
                elif family.server == "git":
                    ws = make_git_workspace(root, rng)
                    command = [*self._commands["git"], "--repository", str(root)]
                    env = git_env(ws.author, ws.next_date, root)
                    session = await stack.enter_async_context(
                        open_session(command, env=env, errlog=self._errlog)
                    )
                else:
                    ws = MemoryWorkspace(self.graph_file)
                    self.graph_file.unlink(missing_ok=True)
                    session = await self._memory_session()
                plan = family.build(rng, ws)
                turns: list[Turn] = []
                for call in plan.calls[:MAX_CALLS]:
                    text, is_error = await session.call(call.name, call.arguments)
                    action = {"name": call.name, "arguments": call.arguments}
                    meta = {"is_error": is_error, "planned_error": call.expect_error}
                    turns.append(Turn(action=action, observation=text, metadata=meta))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return Trajectory(
            domain="mcp",
            tools=session.tools,
            turns=turns,
            id=f"mcp-s{seed}-{index:05d}",
            metadata={
                "family": family.name,
                "server": family.server,
                "task": plan.task,
                "seed": seed,
                "index": index,
                "deterministic": family.deterministic,
            },
        )


def _server_commands(
    servers: Sequence[str], node_prefix: str | Path | None
) -> dict[str, list[str]]:
    commands: dict[str, list[str]] = {}
    if "filesystem" in servers:
        commands["filesystem"] = [str(npm_mcp_server(FILESYSTEM_PACKAGE, node_prefix))]
    if "memory" in servers:
        commands["memory"] = [str(npm_mcp_server(MEMORY_PACKAGE, node_prefix))]
    if "git" in servers:
        commands["git"] = [str(git_mcp_server())]
    return commands


async def record_mcp(
    n: int,
    seed: int,
    *,
    servers: Sequence[str] = MCP_SERVERS,
    workdir: str | Path | None = None,
    node_prefix: str | Path | None = None,
    workers: int = 2,
    progress: Progress | None = None,
) -> tuple[list[Trajectory], list[str]]:
    """Record ``n`` trajectories; returns them in index order and the errors of failed ones.

    A trajectory whose server crashed is dropped and its error kept; more than
    a tenth failing raises :class:`DownstreamError` with the first error.
    """
    if n < 1:
        raise ConfigError(f"--n must be at least 1, got {n}")
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    families = families_for(servers)
    order = sorted(families, key=lambda f: f.name)
    random.Random(f"aw-mcp-order:{seed}").shuffle(order)
    commands = _server_commands(servers, node_prefix)
    base = Path(workdir) if workdir is not None else _default_workdir()
    base.mkdir(parents=True, exist_ok=True)
    lock = (base / ".lock").open("w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        raise ConfigError(
            f"another run is using the work folder {base}; pass a different --workdir"
        ) from None
    done: dict[int, Trajectory] = {}
    failed: dict[int, str] = {}
    next_index = iter(range(n))

    async def work(slot: int, errlog: TextIO) -> None:
        worker = _Worker(slot, base, commands, errlog)
        try:
            for index in next_index:
                family = order[index % len(order)]
                try:
                    done[index] = await worker.record(index, family, seed)
                except Exception as exc:  # a crashed or hung server: keep the error, go on
                    failed[index] = (
                        f"trajectory {index} ({family.name}): {type(exc).__name__}: {exc}"
                    )
                    await worker.aclose()
                    worker = _Worker(slot, base, commands, errlog)
                if progress is not None:
                    progress(len(done) + len(failed), n)
        finally:
            await worker.aclose()

    try:
        with (base / "servers.log").open("a", encoding="utf-8") as errlog:
            async with anyio.create_task_group() as tg:
                for slot in range(min(workers, n)):
                    tg.start_soon(work, slot, errlog)
    finally:
        lock.close()
    errors = [failed[i] for i in sorted(failed)]
    if len(failed) > n // 10:
        raise DownstreamError(f"{len(failed)} of {n} trajectories failed; first: {errors[0]}")
    return [done[i] for i in sorted(done)], errors


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder for the split files")


def call_stats(trajectories: Sequence[Trajectory]) -> dict[str, object]:
    """Calls, error share and per-family counts, for the manifest and the CLI summary."""
    calls = [t for traj in trajectories for t in traj.turns]
    errors = sum(1 for t in calls if t.metadata.get("is_error"))
    per_family = Counter(str(t.metadata["family"]) for t in trajectories)
    return {
        "calls": len(calls),
        "error_calls": errors,
        "error_share": round(errors / len(calls), 4) if calls else 0.0,
        "families": dict(sorted(per_family.items())),
    }


async def generate_mcp(
    n: int,
    seed: int,
    out: str | Path,
    *,
    servers: Sequence[str] = MCP_SERVERS,
    workdir: str | Path | None = None,
    node_prefix: str | Path | None = None,
    workers: int = 2,
    progress: Progress | None = None,
) -> DatasetManifest:
    """Record ``n`` trajectories; write them to ``out`` split by family (:func:`write_split`)."""
    servers = list(dict.fromkeys(servers))
    families_for(servers)
    _check_out(Path(out))
    trajectories, errors = await record_mcp(
        n,
        seed,
        servers=servers,
        workdir=workdir,
        node_prefix=node_prefix,
        workers=workers,
        progress=progress,
    )
    assignment: dict[str, str] = {}
    for server in servers:  # per server, so every server has test and validation families
        names = [f.name for f in families_for([server])]
        assignment.update(split_families(names, seed=seed))
    extra: dict[str, object] = {
        "servers": list(servers),
        **call_stats(trajectories),
        "failed": errors,
    }
    return write_split(
        out,
        trajectories,
        assignment,
        domain="mcp",
        generator="aw-lookahead data mcp",
        seed=seed,
        extra=extra,
    )


generate_mcp_sync = own_loop_twin(generate_mcp, "aw-datagen-mcp")
