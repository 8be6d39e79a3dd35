"""``aw-lookahead mcp``: serve the ``simulate`` and ``lookahead`` tools over stdio or HTTP."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ._common import (
    add_prompts_option,
    add_server_options,
    add_tool_context_option,
    world_model_from_args,
)

ENV_TOKEN = "AW_LOOKAHEAD_AUTH_TOKEN"
LEGACY_ENV_TOKEN = "AW_LOOKAHEAD_MCP_TOKEN"


def add_transport_options(p: argparse.ArgumentParser, default_port: int) -> None:
    """``--transport``, ``--host``, ``--port`` and the HTTP security options (shared with proxy)."""
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
        default=None,
        help=f"HTTP only: require 'Authorization: Bearer <token>'. Prefer the env variable "
        f"{ENV_TOKEN}: a token on the command line is visible to other users in `ps`",
    )
    p.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="HTTP only: allow a non-loopback --host without a token (anyone who reaches the "
        "port can call the tools)",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="HOST[:PORT|:*]",
        help="HTTP only: a Host header value to accept besides loopback and --host (repeatable), "
        "e.g. mcp.internal:* when clients reach the server by that name",
    )
    p.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="HTTP only: a browser Origin to accept (repeatable), e.g. https://app.example",
    )


def http_security(args: argparse.Namespace) -> dict[str, Any]:
    """The security keywords of :func:`~aw_lookahead.mcp.serve_http` from the parsed options.

    The token is the flag's, else ``$AW_LOOKAHEAD_AUTH_TOKEN`` (else the older
    ``$AW_LOOKAHEAD_MCP_TOKEN``); an empty one is refused here (an unset
    variable must not turn auth off), and so is one under 16 characters.
    """
    from aw_lookahead._net import check_server_token
    from aw_lookahead.mcp.transport import check_http_auth

    token = args.auth_token
    if token is not None:
        print(
            f"aw-lookahead {args.verb}: warning: --auth-token is visible to other users in `ps`; "
            f"prefer the environment variable {ENV_TOKEN}",
            file=sys.stderr,
        )
        origin = "--auth-token"
    else:
        origin = ENV_TOKEN if ENV_TOKEN in os.environ else LEGACY_ENV_TOKEN
        token = os.environ.get(origin)  # the old name still works: never drop a token silently
    if token is not None:
        check_server_token(token, origin=origin, variable=ENV_TOKEN)
    check_http_auth(args.host, token, allow_unauthenticated=args.allow_unauthenticated)
    return {
        "auth_token": token,
        "allowed_hosts": list(args.allowed_host),
        "allowed_origins": list(args.allowed_origin),
        "allow_unauthenticated": args.allow_unauthenticated,
    }


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp",
        help="MCP server with the simulate and lookahead tools",
        description="Serve the world model to any MCP client: `simulate` predicts one action's "
        "result, `lookahead` compares candidate actions. HTTP serves at http://HOST:PORT/mcp.",
    )
    add_transport_options(p, 8808)
    add_server_options(p)
    add_prompts_option(p)
    add_tool_context_option(p)
    p.add_argument("--max-tokens", type=int, default=1024, help="prediction budget per call")
    p.add_argument(
        "--max-candidates",
        type=int,
        default=16,
        help="most candidates one lookahead call may send (each is one world-model request; "
        "default %(default)s)",
    )
    p.add_argument(
        "--environment",
        metavar="DIR",
        help="the folder the agent's terminal commands run in: each terminal action is first "
        "looked at there, read-only, and one that needs a missing file, folder or program is "
        "vetoed by observation with the names that exist",
    )
    p.add_argument(
        "--on-error",
        choices=["fail_closed", "fail_open"],
        default="fail_closed",
        help="when the world model fails: report an error (default) or answer 'unsimulated'",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio

    from aw_lookahead.errors import ConfigError
    from aw_lookahead.mcp import build_server, serve_http, serve_stdio

    world_model = world_model_from_args(args, max_tokens=args.max_tokens)
    if args.max_candidates < 1:
        raise ConfigError(f"--max-candidates must be >= 1, got {args.max_candidates}")
    server = build_server(
        world_model,
        on_error=args.on_error,
        deadline_s=args.timeout + 5,
        max_candidates=args.max_candidates,
        environment=args.environment,
    )
    if args.transport == "stdio":
        anyio.run(serve_stdio, server)
        return 0

    security = http_security(args)

    def ready(port: int) -> None:
        auth = " (bearer token required)" if security["auth_token"] else ""
        print(f"aw-lookahead mcp: serving http://{args.host}:{port}/mcp{auth}", file=sys.stderr)
        sys.stderr.flush()

    anyio.run(
        lambda: serve_http(server, host=args.host, port=args.port, on_ready=ready, **security)
    )
    return 0
