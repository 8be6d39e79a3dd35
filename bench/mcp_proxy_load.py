"""Proxy overhead under load: N concurrent MCP client sessions x M calls, direct vs gate proxy.

One run, same machine, same filesystem server (``@modelcontextprotocol/server-filesystem``
from ``.cache/node``, see ``tests/conftest.py``), a fresh directory per phase:

* ``direct``: N concurrent client tasks on one stdio session to the server. This is
  what the proxy itself holds downstream, so the comparison isolates the proxy hop.
* ``proxy``: N client sessions (each with its own handshake and history), in-memory
  transport, into one :class:`LookaheadProxy` in gate mode with an instant in-process
  world model (:class:`FunctionWorldModel`), which holds one stdio session to the server.
  Writes are simulated and judged before forwarding; reads pass straight through.
* ``proxy_http`` (``--http``): the same over streamable HTTP on a free local port.

Each session alternates ``write_file`` and ``read_text_file`` of the file it just wrote.
Latency is per ``tools/call`` as the client sees it; calls/s is calls / phase wall time
(from a start barrier, after every session connected and listed tools). Every result
must succeed and the proxy must forward each call exactly once.

    .venv/bin/python bench/mcp_proxy_load.py [--sessions 50] [--calls 20] [--http] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from aw_lookahead.mcp import Downstream, LookaheadProxy, ProxyConfig, ProxyMode, serve_http
from aw_lookahead.trajectory import Action, Trajectory
from aw_lookahead.worldmodel import FunctionWorldModel

ROOT = Path(__file__).resolve().parent.parent
FS_SERVER = ROOT / ".cache" / "node" / "node_modules" / ".bin" / "mcp-server-filesystem"

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]


def instant(trajectory: Trajectory, action: Action) -> str:
    assert isinstance(action, dict)
    return f"Successfully wrote to {action['arguments'].get('path', '')}"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def session_calls(call: Call, root: Path, i: int, calls: int, out: list[float]) -> int:
    """One session's M calls; returns the number of error results."""
    errors = 0
    path = str(root / f"s{i}.txt")
    for j in range(calls):
        name, args = (
            ("write_file", {"path": path, "content": f"{i}-{j}"})
            if j % 2 == 0
            else ("read_text_file", {"path": path})
        )
        started = time.perf_counter()
        result = await call(name, args)
        out.append(time.perf_counter() - started)
        errors += bool(result.is_error)
    return errors


async def phase(
    connect: Callable[[], Any], sessions: int, calls: int, root: Path
) -> dict[str, Any]:
    """Connect ``sessions`` clients, release them together, time every call."""
    latencies: list[float] = []
    errors: list[int] = []
    connected = 0
    go = anyio.Event()
    all_in = anyio.Event()

    async def one(i: int) -> None:
        nonlocal connected
        async with connect() as client:
            await client.list_tools()
            connected += 1
            if connected == sessions:
                all_in.set()
            await go.wait()
            errors.append(await session_calls(client.call_tool, root, i, calls, latencies))
            if len(errors) == sessions:
                ended.append(time.perf_counter())  # before any session closes

    ended: list[float] = []
    async with anyio.create_task_group() as tg:
        for i in range(sessions):
            tg.start_soon(one, i)
        await all_in.wait()
        started = time.perf_counter()
        go.set()
    wall = ended[0] - started
    total = len(latencies)
    return {
        "calls": total,
        "errors": sum(errors),
        "wall_s": round(wall, 3),
        "calls_per_s": round(total / wall, 1),
        "p50_ms": round(1000 * statistics.median(latencies), 2),
        "p95_ms": round(1000 * percentile(latencies, 0.95), 2),
    }


class _Shared:
    """N "sessions" that share one stdio client session (the direct baseline)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    async def __aenter__(self) -> Any:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        return None


async def proxy_phase(
    server: Path, root: Path, sessions: int, calls: int, http: bool
) -> dict[str, Any]:
    """The gate proxy (instant world model) in front of one stdio server in ``root``."""
    from mcp import Client

    proxy = LookaheadProxy(
        Downstream([str(server), str(root)]),
        FunctionWorldModel(instant),
        ProxyConfig(mode=ProxyMode.GATE),
    )
    ports: list[int] = []
    ready = anyio.Event()

    def on_ready(port: int) -> None:
        ports.append(port)
        ready.set()

    def connect() -> Any:
        if http:
            url = f"http://127.0.0.1:{ports[0]}/mcp"
            return Client(url, mode="legacy", read_timeout_seconds=120)
        return Client(proxy.server, mode="legacy")

    async with proxy, anyio.create_task_group() as tg:
        if http:
            tg.start_soon(lambda: serve_http(proxy.server, port=0, on_ready=on_ready))
            await ready.wait()
        stats = await phase(connect, sessions, calls, root)
        tg.cancel_scope.cancel()
    forwarded = proxy.downstream.forwarded
    stats.update(
        forwarded=forwarded,
        vetoed=proxy.stats["vetoed"],
        simulated=proxy.stats["simulated"],
        exactly_once=forwarded == stats["calls"],
    )
    return stats


async def run(server: Path, sessions: int, calls: int, http: bool) -> dict[str, Any]:
    from mcp import Client, StdioServerParameters

    results: dict[str, Any] = {"sessions": sessions, "calls_per_session": calls}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)

        root = base / "direct"
        root.mkdir()
        params = StdioServerParameters(command=str(server), args=[str(root)])
        async with Client(params, mode="legacy", cache=None) as client:
            results["direct"] = await phase(lambda: _Shared(client), sessions, calls, root)

        for variant in ["proxy", "proxy_http"] if http else ["proxy"]:
            root = base / variant
            root.mkdir()
            stats = await proxy_phase(server, root, sessions, calls, variant == "proxy_http")
            stats.update(
                overhead_p50=round(stats["p50_ms"] / results["direct"]["p50_ms"], 2),
                throughput_ratio=round(results["direct"]["calls_per_s"] / stats["calls_per_s"], 2),
            )
            results[variant] = stats
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--sessions", type=int, default=50, help="concurrent client sessions")
    p.add_argument("--calls", type=int, default=20, help="calls per session")
    p.add_argument("--http", action="store_true", help="also run the proxy over streamable HTTP")
    p.add_argument("--server", type=Path, default=FS_SERVER, help="mcp-server-filesystem path")
    p.add_argument("--json", action="store_true", help="print JSON only")
    args = p.parse_args(argv)
    if not args.server.exists():
        print(
            f"{args.server} not found: npm install --prefix .cache/node "
            "@modelcontextprotocol/server-filesystem",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    results = anyio.run(run, args.server, args.sessions, args.calls, args.http)
    results["total_s"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    n, m = args.sessions, args.calls
    print(f"{n} sessions x {m} calls (write_file / read_text_file alternating), fs server")
    print(f"{'':<11}{'calls/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'errors':>8}  overhead")
    for key in ("direct", "proxy", "proxy_http"):
        if key not in results:
            continue
        r = results[key]
        extra = ""
        if key != "direct":
            extra = (
                f"  p50 x{r['overhead_p50']}, throughput /{r['throughput_ratio']}"
                f", forwarded {r['forwarded']} (once each: {r['exactly_once']})"
            )
        row = f"{key:<11}{r['calls_per_s']:>9}{r['p50_ms']:>9}{r['p95_ms']:>9}{r['errors']:>8}"
        print(row + extra)
    print(f"total {results['total_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
