"""``aw-lookahead mcp``: serve the ``simulate`` and ``lookahead`` tools over stdio or HTTP."""

from __future__ import annotations

import argparse
import os
import sys

from aw_lookahead.prompts import PromptSet

from ._common import add_server_options, world_model_from_args

ENV_TOKEN = "AW_LOOKAHEAD_MCP_TOKEN"


def add_transport_options(p: argparse.ArgumentParser, default_port: int) -> None:
    """``--transport``, ``--host``, ``--port``, ``--auth-token`` (shared with ``proxy``)."""
    p.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio (an MCP client starts this command) or streamable HTTP (default %(default)s)",
    )
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address (default %(default)s)")
    p.add_argument("--port", type=int, default=default_port, help="HTTP port (default %(default)s)")
    p.add_argument(
        "--auth-token",
        default=os.environ.get(ENV_TOKEN),
        help=f"HTTP only: require 'Authorization: Bearer <token>' (env {ENV_TOKEN})",
    )


def add_tool_context_option(p: argparse.ArgumentParser) -> None:
    """``--tool-context`` (shared with ``proxy``): where MCP tool definitions go in a prompt."""
    p.add_argument(
        "--tool-context",
        choices=["compact", "full"],
        default="compact",
        help="compact: tool names in the system prompt, the called tool's definition in its "
        "turn (fits a 4K-context model); full: every definition in the system prompt "
        "(long-context models trained on that layout) (default %(default)s)",
    )


def prompts_from_args(args: argparse.Namespace) -> PromptSet:
    return PromptSet(tool_layout=args.tool_context)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="MCP server with the simulate and lookahead tools",
        description="Serve the world model to any MCP client: `simulate` predicts one action's "
        "result, `lookahead` compares candidate actions. HTTP serves at http://HOST:PORT/mcp.",
    )
    add_transport_options(p, 8808)
    add_server_options(p)
    add_tool_context_option(p)
    p.add_argument("--max-tokens", type=int, default=1024, help="prediction budget per call")
    p.add_argument(
        "--on-error",
        choices=["fail_closed", "fail_open"],
        default="fail_closed",
        help="when the world model fails: report an error (default) or answer 'unsimulated'",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from aw_lookahead.mcp import build_server, serve_http, serve_stdio

    world_model = world_model_from_args(
        args, max_tokens=args.max_tokens, prompts=prompts_from_args(args)
    )
    server = build_server(world_model, on_error=args.on_error, deadline_s=args.timeout + 5)
    if args.transport == "stdio":
        anyio.run(serve_stdio, server)
        return 0

    def ready(port: int) -> None:
        auth = " (bearer token required)" if args.auth_token else ""
        print(f"aw-lookahead mcp: serving http://{args.host}:{port}/mcp{auth}", file=sys.stderr)
        sys.stderr.flush()

    anyio.run(
        lambda: serve_http(
            server, host=args.host, port=args.port, auth_token=args.auth_token, on_ready=ready
        )
    )
    return 0
