"""``aw-lookahead proxy [--mode ...] -- <command>``: simulate calls to a real MCP server first."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from aw_lookahead.errors import ConfigError

from ._common import (
    add_prompts_option,
    add_server_options,
    add_tool_context_option,
    world_model_from_args,
)
from .mcp import add_transport_options, http_security

GATE_MAX_TOKENS = 128
"""Gate mode's prediction budget: the verdict reads the start of the prediction (an MCP error
is one at its first line, ``p_failure`` is read at the first output token), so a longer one
only costs time; a small model that runs on to 1,024 tokens took 30-60 s a call on a CPU."""
PREDICTION_MAX_TOKENS = 1024
"""The budget of the modes whose result shows the prediction (preview, dryrun, shadow)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "proxy",
        help="MCP proxy that simulates each tool call before (or instead of) running it",
        description="Put the world model in front of a real MCP server. Start the real server "
        "with the command after `--` (stdio), or reach it with --url (streamable HTTP). Modes: "
        "gate (veto predicted failures, forward the rest), preview (show the prediction, run "
        "after confirmation), dryrun (never run; answer with the simulation), shadow (run, "
        "and log predicted vs real).",
        epilog="example: aw-lookahead proxy --mode gate -- npx -y "
        "@modelcontextprotocol/server-filesystem ~/work",
    )
    p.add_argument(
        "--mode",
        choices=["gate", "preview", "dryrun", "shadow"],
        default="gate",
        help="(default gate)",
    )
    p.add_argument("--url", help="streamable-HTTP URL of the real server (instead of a command)")
    p.add_argument(
        "--simulate-all",
        action="store_true",
        help="gate: simulate read-only tools too (default: readOnlyHint tools pass through)",
    )
    p.add_argument(
        "--on-error",
        choices=["fail_safe", "fail_closed", "fail_open"],
        default="fail_safe",
        help="a call that could not be checked: block it only when the tool may be destructive "
        "(default), block every one, or forward every one",
    )
    p.add_argument(
        "--perturb",
        metavar="SPEC",
        help="dryrun fault injection, e.g. seed=7,error=0.1,latency=0.5,truncate=0.2,paginate=0.2",
    )
    p.add_argument("--shadow-log", type=Path, help="shadow: JSONL file of (predicted, real) pairs")
    p.add_argument(
        "--shadow-wait",
        type=float,
        default=10.0,
        help="shadow: on exit, seconds to wait for pending predictions before writing their "
        "pairs with predicted=null (default %(default)s; 1 s at most after SIGTERM)",
    )
    p.add_argument(
        "--call-timeout", type=float, default=60.0, help="seconds before a downstream call fails"
    )
    p.add_argument(
        "--no-observe",
        action="store_true",
        help="do not look at the real server's state (its read-only tools: file info, "
        "listings, branches) before simulating a call",
    )
    p.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        help=f"prediction budget per call (default {GATE_MAX_TOKENS} in gate mode, where the "
        f"prediction only decides, and {PREDICTION_MAX_TOKENS} in the modes that show it)",
    )
    add_transport_options(p, 8809)
    add_server_options(p)
    add_prompts_option(p)
    add_tool_context_option(p)
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- the real server's command")
    p.set_defaults(func=run)


def prediction_budget(args: argparse.Namespace) -> int:
    """``--max-tokens``, else the mode's default (:data:`GATE_MAX_TOKENS` in gate mode)."""
    if args.max_tokens is not None:
        return int(args.max_tokens)
    return GATE_MAX_TOKENS if args.mode == "gate" else PREDICTION_MAX_TOKENS


def run(args: argparse.Namespace) -> int:
    import anyio

    from aw_lookahead.mcp import (
        Downstream,
        LookaheadProxy,
        Perturbation,
        ProxyConfig,
        ProxyMode,
        serve_http,
        serve_stdio,
    )

    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if args.perturb and args.mode != "dryrun":
        raise ConfigError("--perturb applies to --mode dryrun only")
    if args.mode == "shadow" and args.shadow_log is None:
        raise ConfigError("--mode shadow needs --shadow-log FILE.jsonl to write the pairs to")
    security = http_security(args) if args.transport == "http" else {}
    downstream = Downstream(command or None, url=args.url, call_timeout_s=args.call_timeout)
    config = ProxyConfig(
        mode=ProxyMode(args.mode),
        simulate="always" if args.simulate_all else "risky",
        on_error=args.on_error,
        deadline_s=args.timeout + 5,
        perturb=Perturbation.parse(args.perturb) if args.perturb else None,
        shadow_log=args.shadow_log,
        shadow_flush_s=args.shadow_wait,
        observe=not args.no_observe,
    )
    world_model = world_model_from_args(args, max_tokens=prediction_budget(args))
    proxy = LookaheadProxy(downstream, world_model, config)

    async def on_sigterm() -> None:
        """Write the pending shadow pairs, then die of SIGTERM as usual.

        Clients stop a stdio server by closing its stdin, then SIGTERM, then
        SIGKILL a couple of seconds later; the pairs must be on disk by then.
        """
        with anyio.open_signal_receiver(signal.SIGTERM) as signals:
            async for _ in signals:
                await proxy.flush_shadow(min(args.shadow_wait, 1.0), "the proxy was terminated")
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

    async def main() -> None:
        if args.mode != "shadow" or not hasattr(signal, "SIGTERM"):
            await serve()
            return
        failure: Exception | None = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(on_sigterm)
            try:
                await serve()
            except Exception as exc:  # re-raised as is below, not in an ExceptionGroup
                failure = exc
            tg.cancel_scope.cancel()
        if failure is not None:
            raise failure

    async def serve() -> None:
        async with proxy:
            if args.transport == "stdio":
                await serve_stdio(proxy.server)
                return

            def ready(port: int) -> None:
                print(
                    f"aw-lookahead proxy ({args.mode}): serving http://{args.host}:{port}/mcp "
                    f"in front of {downstream.label}",
                    file=sys.stderr,
                )
                sys.stderr.flush()

            await serve_http(
                proxy.server, host=args.host, port=args.port, on_ready=ready, **security
            )

    anyio.run(main)
    return 0
