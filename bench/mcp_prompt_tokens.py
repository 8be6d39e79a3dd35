"""Prompt size of an MCP gate call in front of the real filesystem server.

Runs 10 real calls (reads, listings, a search) against
``@modelcontextprotocol/server-filesystem`` in a scratch folder, then renders
the world-model prompt for a ``write_file`` with no history and after those
10 calls, in the compact and the full tool layout, and counts its tokens with
the server's ``/tokenize``. With ``--predict`` it also asks the world model
for the write after 10 calls and reports whether it was simulated or refused
as too long (and how many old turns the trimmer dropped).

    .venv/bin/python bench/mcp_prompt_tokens.py --base-url http://127.0.0.1:8765/v1 \\
        --fs-server .cache/node/node_modules/.bin/mcp-server-filesystem [--predict] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from aw_lookahead.errors import WorldModelError
from aw_lookahead.mcp import Downstream
from aw_lookahead.mcp._modes import result_text
from aw_lookahead.prompts import PromptSet, render_messages
from aw_lookahead.trajectory import Trajectory, Turn
from aw_lookahead.worldmodel import OpenAIWorldModel
from aw_lookahead.worldmodel._context import count_tokens


def _seed(tmp: str) -> Path:
    root = Path(tmp).resolve()
    (root / "src").mkdir()
    (root / "README.md").write_text("# demo\n\nA small project used to measure prompt sizes.\n")
    for i in range(4):
        body = "\n".join(f"def f_{i}_{j}(x):\n    return x * {j}\n" for j in range(8))
        (root / "src" / f"mod_{i}.py").write_text(body)
    (root / "notes.txt").write_text("todo: rename f_0_1\n" * 5)
    return root


def _calls(root: Path) -> list[dict[str, Any]]:
    r = str(root)
    reads = [
        {"name": "read_text_file", "arguments": {"path": f"{r}/src/mod_{i}.py"}} for i in range(4)
    ]
    return [
        {"name": "list_allowed_directories", "arguments": {}},
        {"name": "list_directory", "arguments": {"path": r}},
        {"name": "read_text_file", "arguments": {"path": f"{r}/README.md"}},
        *reads,
        {"name": "search_files", "arguments": {"path": r, "pattern": "*.py"}},
        {"name": "get_file_info", "arguments": {"path": f"{r}/notes.txt"}},
        {"name": "read_text_file", "arguments": {"path": f"{r}/notes.txt"}},
    ]


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    ap.add_argument("--model", default=None)
    ap.add_argument("--fs-server", default=".cache/node/node_modules/.bin/mcp-server-filesystem")
    ap.add_argument("--max-tokens", type=int, default=1024)
    ap.add_argument("--predict", action="store_true", help="also simulate the write after 10 calls")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    wm = OpenAIWorldModel(args.model, base_url=args.base_url, max_tokens=args.max_tokens)
    model = await wm.resolve_model()
    out: dict[str, Any] = {"model": model}
    with tempfile.TemporaryDirectory() as tmp:
        root = _seed(tmp)
        async with Downstream([args.fs_server, str(root)]) as down:
            tools = [
                t.model_dump(mode="json", by_alias=True, exclude_none=True)
                for t in await down.tools()
            ]
            turns = []
            for call in _calls(root):
                result = await down.call(call["name"], call["arguments"])
                turns.append(Turn(action=call, observation=result_text(result)))
        write = {"name": "write_file", "arguments": {"path": f"{root}/out.txt", "content": "hi\n"}}
        for layout in ("compact", "full"):
            prompts = PromptSet(tool_layout=layout)  # type: ignore[arg-type]
            for n in (0, 10):
                traj = Trajectory(domain="mcp", tools=tools, turns=turns[:n])
                msgs = render_messages(traj, write, prompts=prompts)
                tokens = await count_tokens(
                    wm._client, args.base_url, model, msgs, request_timeout=30.0
                )
                out[f"{layout}_history{n}_tokens"] = tokens
        if args.predict:
            traj = Trajectory(domain="mcp", tools=tools, turns=turns)
            try:
                pred = await wm.predict(traj, write)
                out["predict_after_10"] = {
                    "simulated": True,
                    "prompt_tokens": pred.usage.prompt_tokens,
                    "trimmed_turns": pred.trimmed_turns,
                    "observation": pred.observation[:200],
                }
            except WorldModelError as exc:
                out["predict_after_10"] = {"simulated": False, "error": str(exc)[:300]}
    await wm.aclose()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
