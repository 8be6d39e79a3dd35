"""``aw-lookahead models``: list what a server serves."""

from __future__ import annotations

import argparse
import asyncio

from ._common import add_server_options, print_json, world_model_from_args


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "models",
        help="list the models an OpenAI-compatible server serves",
        description="List the models served at --base-url, with their context length.",
    )
    add_server_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    async def go() -> int:
        async with world_model_from_args(args) as wm:
            models = await wm.list_models()
        if args.json:
            print_json([{"id": m.id, "max_model_len": m.max_model_len} for m in models])
        else:
            for m in models:
                ctx = f"  (context {m.max_model_len})" if m.max_model_len else ""
                print(f"{m.id}{ctx}")
        return 0

    return asyncio.run(go())
