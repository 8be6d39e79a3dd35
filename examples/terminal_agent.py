"""A terminal agent with predictive lookahead: ``create_agent`` + a real sandboxed shell.

What it does:

1. Opens a real bash sandbox (a fresh temp directory, no network where the
   machine allows it; every command time-limited) holding ``data/`` with two
   files and a task that needs ``data/``.
2. Builds ``create_agent`` with the ``shell`` tool, ``LookaheadMiddleware``
   (gate mode; the world model is any OpenAI-compatible server; the sandbox is
   its environment, looked at read-only before each check) and a
   ``TrajectoryRecorder`` writing the real turns to JSONL.
3. Seeds the first turn with scripted tool calls (``ls``, ``cat missing.txt``,
   ``rm -rf data``, ``ls data``) so at least one lookahead decision is shown
   even when the policy model never calls a tool; ``--no-seed`` turns this
   off. After that the policy model (any OpenAI-compatible chat model) takes
   over. Servers that refuse tool binding (vLLM without
   ``--enable-auto-tool-choice``) get the request without tools, and a
   command in the reply (a ```bash block or a ``$ cmd`` line) becomes the
   shell call.
4. Prints every decision as it is made and every real tool result. Each veto
   says what it rests on: ``by prediction`` when a rule read a failure in the
   world model's predicted observation (the predicted text is shown), ``by
   observation`` when looking at the sandbox showed a file or program missing
   (with the names that exist), ``by action rule`` when the command's own text
   decided (``rm -rf`` needs no world model). The summary says honestly how
   ``cat missing.txt`` was judged.

Run::

    AW_LOOKAHEAD_BASE_URL=http://127.0.0.1:8765/v1 AW_LOOKAHEAD_MODEL=smollm2-135m-instruct \\
        python examples/terminal_agent.py
    python examples/terminal_agent.py --base-url http://host:8000/v1 --model Qwen/Qwen3.5-35B-A3B

Exits 0 when the run finished (also when the step budget ran out), 1 when no
server answers.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import GraphRecursionError

from aw_lookahead.evaluation.agent_tasks.loop import TextCommands
from aw_lookahead.langgraph import LookaheadMiddleware, TrajectoryRecorder, read_recording
from aw_lookahead.lookahead.types import veto_basis
from aw_lookahead.sandbox import TerminalSandbox, observation
from aw_lookahead.worldmodel import OpenAIWorldModel

TASK = (
    "You work in a bash terminal. Count the lines of every file in data/ and write the "
    "counts to summary.txt. Keep data/: it is needed later. Use the shell tool."
)
SEED = ("ls", "cat data/a.tx", "cat missing.txt", "rm -rf data", "ls data")
_ids = itertools.count()


class SeedAndTextTools(TextCommands):
    """Demo-only policy helper: a scripted first turn, then the package's :class:`TextCommands`
    (commands read from the reply text when the policy server refuses tool binding)."""

    def __init__(self, seed: tuple[str, ...]) -> None:
        super().__init__()
        self.seed = list(seed)

    def _seeded(self) -> AIMessage | None:
        if not self.seed:
            return None
        calls = [
            {"name": "shell", "args": {"command": c}, "id": f"seed_{next(_ids)}"} for c in self.seed
        ]
        self.seed = []
        return AIMessage("Let me look around first.", tool_calls=calls)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage:
        seeded = self._seeded()
        if seeded is not None:
            return seeded
        refused_before = self.tools_refused
        response = await super().awrap_model_call(request, handler)
        if self.tools_refused and not refused_before:
            print("  (the policy server refuses tool binding: reading commands from text)")
        return response

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        raise NotImplementedError("this demo runs the agent with ainvoke/astream")


_BASIS_TEXT = {
    "observed": "by observation (the sandbox was looked at, read-only: certain, no model call)",
    "prediction": "by prediction (a rule read the failure in the predicted observation)",
    "action": "by action rule (the command text alone; no world model needed)",
    "unchecked": "unchecked (the world model gave no usable prediction)",
}


def _print_decision(record: dict[str, Any]) -> str | None:
    """Print one decision; return what a veto rests on (None when it executes)."""
    d = record["decision"]
    predicted = ((d.get("prediction") or {}).get("observation") or "").strip().replace("\n", " | ")
    command = json.dumps(d["action"])[:80]
    basis = veto_basis(d)
    again = "  (checked again with the turn's earlier reads)" if record.get("recheck") else ""
    print(f"  [lookahead] {record['kind'].upper():<11} {command}{again}")
    if predicted:
        print(f"               predicted: {predicted[:160]}")
    if d.get("p_failure") is not None:
        threshold = d.get("threshold")
        against = f" (veto threshold {threshold:.2f})" if threshold is not None else ""
        print(f"               p_failure {d['p_failure']:.2f}{against}")
    if d.get("uncertain") and basis is None:
        print("               ran, marked uncertain (its predicted failure did not veto; see why)")
    if basis is not None:
        print(f"               vetoed {_BASIS_TEXT[basis]}")
        rules = ", ".join(s["name"] for s in d.get("signals") or [] if s.get("name"))
        if rules:
            print(f"               rules: {rules[:160]}")
    if d.get("reason"):
        print(f"               why: {d['reason'][:240]}")
    if d.get("error"):
        print(f"               error: {d['error'][:200]}")
    return basis


async def run(args: argparse.Namespace) -> int:
    world = OpenAIWorldModel(
        args.model, base_url=args.base_url, max_tokens=args.wm_max_tokens, temperature=0.0
    )
    try:
        model = await world.resolve_model()
    except Exception as exc:
        print(f"terminal_agent: {exc}", file=sys.stderr)
        return 1
    policy = ChatOpenAI(
        model=args.policy_model or model,
        base_url=args.policy_base_url or args.base_url or world.base_url,
        api_key=os.environ.get("AW_LOOKAHEAD_API_KEY", "EMPTY"),
        temperature=0.0,
        max_tokens=args.policy_max_tokens,
    )
    record_path = Path(args.record or Path(tempfile.mkdtemp()) / "terminal_agent.jsonl")
    async with TerminalSandbox() as sandbox:
        sandbox.write_file("data/a.txt", "alpha\nbeta\n")
        sandbox.write_file("data/b.txt", "gamma\n")

        async def shell(command: str) -> str:
            """Run a bash command in the workspace and return what the terminal shows."""
            return observation(await sandbox.run(command, timeout=args.command_timeout))

        tool = StructuredTool.from_function(coroutine=shell, name="shell")
        gate = LookaheadMiddleware(world, deadline_s=args.deadline, environment=sandbox)
        recorder = TrajectoryRecorder(record_path)
        helper = SeedAndTextTools(() if args.no_seed else SEED)
        agent = create_agent(
            policy,
            [tool],
            system_prompt=TASK,
            middleware=[helper, gate, recorder],
            checkpointer=InMemorySaver(),
        )
        print(f"sandbox: {sandbox.path}\nworld model: {model} @ {world.base_url}\ntask: {TASK}\n")
        started = time.perf_counter()
        config: Any = {"configurable": {"thread_id": "demo"}, "recursion_limit": args.max_steps}
        decisions = 0
        missing_verdict = "not judged"
        try:
            async for update in agent.astream(
                {"messages": [("user", TASK)]}, config, stream_mode="updates"
            ):
                for node, change in update.items():
                    if not isinstance(change, dict):
                        continue
                    for rec in change.get("lookahead") or []:
                        decisions += 1
                        basis = _print_decision(rec)
                        if "missing.txt" in json.dumps(rec["decision"]["action"]):
                            if basis is not None:
                                missing_verdict = f"vetoed {_BASIS_TEXT[basis]}"
                            elif rec["kind"] == "execute":
                                missing_verdict = (
                                    "not vetoed: the world model did not predict the error"
                                )
                            else:
                                missing_verdict = f"not vetoed ({rec['kind']}, not simulated)"
                    for msg in change.get("messages") or []:
                        if isinstance(msg, AIMessage) and node.startswith("model"):
                            calls = [c["args"] for c in msg.tool_calls]
                            print(f"policy: {str(msg.content)[:120]!r} calls={calls}")
                        elif isinstance(msg, ToolMessage) and node == "tools":
                            print(f"  [tool] {str(msg.content).strip()[:160]}")
        except GraphRecursionError:
            print(f"(stopped after the step budget of {args.max_steps} graph steps)")
        finally:
            recorder.close()
            await gate.aclose()
        kept = (await sandbox.run("test -d data && echo yes || echo no")).output.strip()
    runs = await asyncio.to_thread(read_recording, record_path) if recorder.writer.count else []
    turns = sum(len(t.turns) for t in runs)
    print(
        f"\n{decisions} lookahead decisions, {turns} real tool calls recorded to {record_path}, "
        f"data/ still there: {kept}, {time.perf_counter() - started:.1f} s"
    )
    if not args.no_seed:
        print(f"`cat missing.txt`: {missing_verdict}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", default=os.environ.get("AW_LOOKAHEAD_BASE_URL"))
    p.add_argument("--model", default=os.environ.get("AW_LOOKAHEAD_MODEL"))
    p.add_argument("--policy-base-url", help="policy server (default: the world model's)")
    p.add_argument("--policy-model", help="policy model (default: the world model)")
    p.add_argument("--no-seed", action="store_true", help="no scripted first turn")
    p.add_argument("--max-steps", type=int, default=14, help="graph step budget")
    p.add_argument("--wm-max-tokens", type=int, default=96)
    p.add_argument("--policy-max-tokens", type=int, default=96)
    p.add_argument("--deadline", type=float, default=60.0, help="lookahead deadline, seconds")
    p.add_argument("--command-timeout", type=float, default=10.0)
    p.add_argument("--record", help="JSONL file for the recorded real turns")
    return asyncio.run(run(p.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
