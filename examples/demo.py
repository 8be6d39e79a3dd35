"""``make demo``: start the embedded world model once, then run the two demos against it.

The model is SmolLM2-135M with the adapter shipped in the package merged in
(``--base-only`` serves the raw base instead, to compare), on llama.cpp's
``llama-server`` (``--runtime vllm``: on vLLM's CPU build).

1. ``simulate_demo.py``: predictions for a real terminal trajectory, turn by turn.
2. ``terminal_agent.py``: a LangChain agent with a real sandboxed shell, gated by lookahead;
   it reports whether ``cat missing.txt`` was vetoed by the world model's prediction or
   by an action rule.

The server is always stopped at the end, also on errors or Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from aw_lookahead.embedded import embedded_adapter
from aw_lookahead.serving import EMBEDDED_RUNTIME, start_embedded_server

HERE = Path(__file__).parent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-only", action="store_true", help="serve the raw base, no adapter")
    p.add_argument(
        "--runtime",
        choices=("llama.cpp", "vllm"),
        default=EMBEDDED_RUNTIME,
        help=f"the server that runs the model (default: {EMBEDDED_RUNTIME})",
    )
    p.add_argument(
        "--ready-timeout",
        type=float,
        default=None,
        help="seconds the server may take to start (default: $AW_LOOKAHEAD_READY_TIMEOUT, "
        "else 600; `make demo READY_TIMEOUT=1200` sets it)",
    )
    args = p.parse_args(argv)
    if args.base_only:
        which = "the raw base, no adapter"
    else:
        info = embedded_adapter()
        kind = "PLACEHOLDER adapter (smoke run)" if info.placeholder else "trained adapter"
        which = f"with the shipped {kind} {info.sha256[:12]} merged in"
    print(f"Starting the embedded world model ({args.runtime}, SmolLM2-135M, {which});")
    print("the first run converts and merges it; wait for the 'serving' line...", flush=True)
    with start_embedded_server(
        runtime=args.runtime,
        base_only=args.base_only,
        timeout=args.ready_timeout,
        progress=_progress,
    ) as server:
        env = {**os.environ, **server.client_env()}
        print(f"serving {server.model} at {server.base_url}\n")
        for script in ("simulate_demo.py", "terminal_agent.py"):
            path = HERE / script
            if not path.exists():
                print(f"(skipping {script}: not present)")
                continue
            print(f"\n=== {script} ===", flush=True)
            code = subprocess.run([sys.executable, str(path)], env=env, check=False).returncode
            if code != 0:
                print(f"{script} failed with exit status {code}", file=sys.stderr)
                return code
    return 0


def _progress(line: str) -> None:
    print(f"  {line}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
