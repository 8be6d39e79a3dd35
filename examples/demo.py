"""``make demo``: start the embedded world model once, then run the two demos against it.

1. ``simulate_demo.py``: predictions for a real terminal trajectory, turn by turn.
2. ``terminal_agent.py``: a LangChain agent with a real sandboxed shell, gated by lookahead.

The server is always stopped at the end, also on errors or Ctrl-C.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from aw_lookahead.serving import start_embedded_server

HERE = Path(__file__).parent


def main() -> int:
    print("Starting the embedded world model (CPU vLLM, SmolLM2-135M); first run converts it...")
    with start_embedded_server() as server:
        env = dict(os.environ)
        env["AW_LOOKAHEAD_BASE_URL"] = server.base_url
        env["AW_LOOKAHEAD_MODEL"] = server.model
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


if __name__ == "__main__":
    sys.exit(main())
