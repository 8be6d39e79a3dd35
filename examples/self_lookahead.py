"""One model, two roles: an agent that predicts the consequences of its own actions.

In the unified agent-foundation paradigm the agent's own model is warmed up
on world-model data (``aw-lookahead train ... --agent-data ... --mix``, then
``--method grpo``), so one served model is both the policy and the world
model. This script builds ``create_agent`` with that one served name twice:

* as the policy: LangChain ``ChatOpenAI`` with a ``shell`` tool;
* as the world model: :class:`~aw_lookahead.worldmodel.OpenAIWorldModel` behind
  :class:`~aw_lookahead.langgraph.LookaheadMiddleware` (gate mode), which
  simulates every shell call before it runs in a real sandbox.

Serve the base with the warm-up adapter and a tool-call parser (vLLM answers
requests with tools only with one), e.g. on a GPU::

    vllm serve Qwen/Qwen3-4B-Instruct-2507 --enable-lora --max-lora-rank 16 \\
        --lora-modules warmup=runs/warmup/adapter \\
        --enable-auto-tool-choice --tool-call-parser hermes

or the embedded CPU model::

    aw-lookahead serve --local --runtime vllm -- --enable-lora --max-lora-rank 16 \\
        --lora-modules warmup=runs/warmup/adapter \\
        --enable-auto-tool-choice --tool-call-parser hermes

Run::

    python examples/self_lookahead.py --base-url http://127.0.0.1:8000/v1 --model warmup

Every lookahead decision and every real tool result is printed, and the end
says how many requests of each role the one server answered. Exits 0 when
the run finished (also when the step budget ran out), 1 when no server
answers or it refuses tools (the message says which flags it needs).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

import openai
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.errors import GraphRecursionError

from aw_lookahead.langgraph import LookaheadMiddleware
from aw_lookahead.sandbox import TerminalSandbox, observation
from aw_lookahead.worldmodel import OpenAIWorldModel

TASK = (
    "You work in a bash terminal. Find out how many lines data/notes.txt has and write the "
    "number to count.txt. Use the shell tool, one command per call."
)


async def run(args: argparse.Namespace) -> int:
    key = os.environ.get("AW_LOOKAHEAD_API_KEY", "EMPTY")
    world = OpenAIWorldModel(
        args.model, base_url=args.base_url, api_key=key, max_tokens=256, temperature=0.0
    )
    try:
        name = await world.resolve_model()
    except Exception as exc:
        print(f"self_lookahead: {exc}", file=sys.stderr)
        return 1
    policy = ChatOpenAI(
        model=name, base_url=world.base_url, api_key=key, temperature=0.0, max_tokens=256
    )
    async with TerminalSandbox() as sandbox:
        sandbox.write_file("data/notes.txt", "buy milk\nTODO: call Bob\nread book\n")

        async def shell(command: str) -> str:
            """Run a bash command in the workspace and return what the terminal shows."""
            return observation(await sandbox.run(command, timeout=10.0))

        tool = StructuredTool.from_function(coroutine=shell, name="shell")
        gate = LookaheadMiddleware(world, deadline_s=args.deadline)
        agent = create_agent(policy, [tool], system_prompt=TASK, middleware=[gate])
        print(f"one model: {name} @ {world.base_url} (policy and world model)\ntask: {TASK}\n")
        counts = {"policy": 0, "world model": 0}
        config: Any = {"recursion_limit": args.max_steps}
        try:
            async for update in agent.astream(
                {"messages": [("user", TASK)]}, config, stream_mode="updates"
            ):
                for node, change in update.items():
                    if not isinstance(change, dict):
                        continue
                    if node == "model":
                        counts["policy"] += 1
                    for rec in change.get("lookahead") or []:
                        counts["world model"] += 1
                        d = rec["decision"]
                        predicted = ((d.get("prediction") or {}).get("observation") or "")[:120]
                        print(f"  [lookahead] {rec['kind']:<9} {d['action']!s:.70}")
                        print(f"              predicted: {predicted!r}")
                    for m in change.get("messages") or []:
                        if isinstance(m, ToolMessage):
                            print(f"  [real]      {str(m.content)[:120]!r}")
        except GraphRecursionError:
            print(f"(step budget of {args.max_steps} spent)")
        except openai.BadRequestError as exc:
            if "tool" not in str(exc).lower():
                raise
            print(
                "self_lookahead: the server refuses requests with tools; start vLLM with "
                "--enable-auto-tool-choice --tool-call-parser <parser> (hermes for Qwen)",
                file=sys.stderr,
            )
            return 1
        finally:
            await gate.aclose()
        print(
            f"\nthe one server answered {counts['policy']} policy turns and "
            f"{counts['world model']} lookahead predictions"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", default=None, help="the one server (env AW_LOOKAHEAD_BASE_URL)")
    p.add_argument("--model", default=None, help="served name of base + warm-up adapter")
    p.add_argument("--max-steps", type=int, default=12, help="graph steps before stopping")
    p.add_argument("--deadline", type=float, default=60.0, help="seconds per prediction")
    return asyncio.run(run(p.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
