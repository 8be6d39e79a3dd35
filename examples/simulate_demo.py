"""Simulate the actions of a real terminal trajectory with the world model, turn by turn.

Each action of ``examples/trajectories/terminal_demo.jsonl`` (recorded by
running the commands in a real sandbox) is predicted from the turns before
it, and the prediction is printed beside what the terminal really printed.

    python examples/simulate_demo.py                      # starts the embedded CPU model
    AW_LOOKAHEAD_BASE_URL=http://127.0.0.1:8000/v1 \\
        python examples/simulate_demo.py                  # any running server

The embedded model (SmolLM2-135M) is tiny and its predictions are poor; the
same code talks to Qwen-AgentWorld-35B-A3B on a GPU vLLM server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import ExitStack
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aw_lookahead import OpenAIWorldModel, read_trajectories
from aw_lookahead.trajectory import action_text

HERE = Path(__file__).parent
DEFAULT_DATA = HERE / "trajectories" / "terminal_demo.jsonl"


async def simulate(
    path: Path, base_url: str, model: str | None, turns: int, server: str | None = None
) -> Table:
    trajectory = next(iter(read_trajectories(path)))
    table = Table(title=f"World-model predictions for {path.name}", show_lines=True)
    for col in ("turn", "action", "predicted", "real", "s", "cached"):
        table.add_column(col, overflow="fold")
    async with OpenAIWorldModel(
        model, base_url=base_url, server=server, max_tokens=48, timeout=120
    ) as wm:
        for i, sample in enumerate(trajectory.turn_samples()[:turns]):
            pred = await wm.predict(sample.history, sample.action)
            table.add_row(
                str(i + 1),
                action_text(sample.action),
                pred.observation[:300],
                sample.observation[:300],
                f"{pred.latency_s:.1f}",
                str(pred.usage.cached_tokens),
            )
    return table


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--turns", type=int, default=4, help="how many turns to simulate")
    parser.add_argument("--base-url", default=os.environ.get("AW_LOOKAHEAD_BASE_URL"))
    parser.add_argument("--model", default=os.environ.get("AW_LOOKAHEAD_MODEL"))
    args = parser.parse_args(argv)
    console = Console()
    with ExitStack() as stack:
        base_url, model, kind = args.base_url, args.model, None
        if not base_url:
            from aw_lookahead.serving import start_embedded_server

            console.print("[bold]Starting the embedded world model (llama.cpp, SmolLM2-135M)...")
            server = stack.enter_context(start_embedded_server())
            base_url, model, kind = server.base_url, server.model, server.server_kind
            console.print(f"serving {model} at {base_url}")
        table = asyncio.run(simulate(args.data, base_url, model, args.turns, kind))
        console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
