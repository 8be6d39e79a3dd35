"""``aw-lookahead eval tasks``: the agent task suite, closed-loop, with or without lookahead."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from aw_lookahead._progress import line_progress
from aw_lookahead.errors import RunError, UsageError
from aw_lookahead.evaluation.agent_tasks import FAMILIES, select_tasks

from ._common import (
    add_server_options,
    output_file,
    print_json,
    refuse_to_replace,
    world_model_from_args,
)

__all__ = ["register_tasks"]


def register_tasks(sub: Any) -> None:
    """Add ``tasks`` to the ``eval`` verbs."""
    p = sub.add_parser(
        "tasks",
        help="run the agent task suite closed-loop: a policy model, a real shell, a real check",
        description="Run each task of the agent task suite (closed-loop terminal tasks in "
        f"families no training split holds: {', '.join(FAMILIES)}) in a fresh sandbox with "
        "a real LangGraph agent driven by the policy model, at most --step-limit model calls, "
        "and report the share of tasks whose check passes. --lookahead gates every call "
        "through the world model given by --base-url/--model.",
    )
    p.add_argument("--policy-base-url", default=None, help="policy endpoint (default: --base-url)")
    p.add_argument(
        "--policy-model",
        default=None,
        help="policy model name (default: the first model the policy endpoint serves)",
    )
    p.add_argument("--policy-api-key", default=None, help="default: --api-key")
    p.add_argument("--policy-max-tokens", type=int, default=128, help="tokens per policy reply")
    p.add_argument("--lookahead", action="store_true", help="gate each call with the world model")
    p.add_argument(
        "--max-tokens",
        type=int,
        default=1024,
        help="prediction budget per call with --lookahead (default %(default)s)",
    )
    add_server_options(p)
    p.add_argument("--step-limit", type=int, default=5, help="policy calls per task (default 5)")
    p.add_argument("--command-timeout", type=float, default=10.0, help="seconds per command")
    p.add_argument("--family", action="append", default=[], help="only this family (repeatable)")
    p.add_argument("--task", action="append", default=[], help="only this task (repeatable)")
    p.add_argument("--label", default=None, help="the configuration's name in the report")
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.add_argument("--out", default=None, help="write the JSON report to this file")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run_tasks_verb)


async def _policy_model(base_url: str, api_key: str | None, name: str | None) -> str:
    """``name``, or the first model the policy endpoint serves; either way the endpoint must
    answer, so a policy server that is down is one clear error, not a failure per task."""
    from aw_lookahead.endpoint import OpenAIProvider
    from aw_lookahead.errors import WorldModelError

    provider = OpenAIProvider.resolve(base_url=base_url, api_key=api_key)
    try:
        served = [m.id for m in await provider.list_models(10.0)]
    except WorldModelError as exc:
        cause = exc.__cause__ or exc
        raise RunError(
            f"the policy endpoint {base_url} does not answer ({type(cause).__name__}: "
            f"{cause}); start the policy model's server or pass --policy-base-url"
        ) from exc
    finally:
        await provider.aclose()
    if name is not None:
        if name not in served:
            raise UsageError(f"{base_url} does not serve {name!r}; it serves {served}")
        return name
    if not served:
        raise UsageError(f"{base_url} serves no model; pass --policy-model")
    return served[0]


def run_tasks_verb(args: argparse.Namespace) -> int:
    tasks = select_tasks(args.family, args.task)
    if args.list:
        for task in tasks:
            print(f"{task.family:<18} {task.name:<28} {task.instruction}")
        return 0
    if args.step_limit < 1:
        raise UsageError(f"--step-limit must be >= 1, got {args.step_limit}")
    if args.max_tokens < 1:
        raise UsageError(f"--max-tokens must be >= 1, got {args.max_tokens}")
    out = None
    if args.out:
        out = output_file(args.out, "--out")
        if not args.force:
            refuse_to_replace([out], "--out")
    import httpx
    from langchain_openai import ChatOpenAI

    from aw_lookahead.evaluation.agent_tasks.loop import run_tasks
    from aw_lookahead.langgraph import LookaheadMiddleware

    policy_url = args.policy_base_url or args.base_url
    policy_key = args.policy_api_key or args.api_key

    async def go() -> Any:
        name = await _policy_model(policy_url, policy_key, args.policy_model)
        # our own client: langchain-openai shares a cached default one per (url, timeout),
        # and closing that would break a later run in the same process
        http = httpx.AsyncClient(timeout=args.timeout)
        policy = ChatOpenAI(
            model=name,
            base_url=policy_url,
            api_key=policy_key or "EMPTY",
            temperature=0.0,
            max_tokens=args.policy_max_tokens,
            timeout=args.timeout,
            max_retries=1,
            http_async_client=http,
        )
        world = world_model_from_args(args, max_tokens=args.max_tokens) if args.lookahead else None

        def middleware() -> list[Any]:
            return [] if world is None else [LookaheadMiddleware(world)]

        label = args.label or f"{name}{' + lookahead' if world is not None else ''}"
        try:
            return await run_tasks(
                tasks,
                policy,
                label=label,
                middleware=middleware,
                step_limit=args.step_limit,
                command_timeout=args.command_timeout,
                progress=None if args.no_progress else line_progress("eval tasks", "tasks"),
            )
        finally:
            if world is not None:
                await world.aclose()
            await http.aclose()

    suite = asyncio.run(go())
    summary = suite.summary()
    if out is not None:
        report = {"summary": summary, "results": [r.model_dump() for r in suite.results]}
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print_json(summary)
    else:
        print(
            f"{summary['label']}: {summary['succeeded']}/{summary['tasks']} tasks succeeded "
            f"({summary['success_rate']:.1%}), {summary['vetoes']} vetoes, "
            f"{summary['errors']} runs with errors"
        )
    return 0
