"""Cost of redacting one world-model request, and of 1 MiB adversarial inputs.

    python bench/redact.py [--turns 50] [--repeat 300] [--mib 1]

Prints the median and p95 per call of ``Redactor.messages`` on the rendered
messages, cold (a fresh redactor each call) and warm (the history seen
before, as for the K candidates of a step and every later step), and, as the
baseline measured in the same run, of ``render_messages`` itself (what
building the request costs anyway). Every tenth turn carries a secret, so
the replacement path is measured too.

Then, per 1 MiB input, the median of ``Redactor.text`` on a fresh redactor:
ordinary tool output (the baseline of the same run), inputs built to make
regular expressions backtrack (runs of PEM headers, JWT-like runs, base64
after an AWS word, URLs full of colons, runs of dashes), each against the
50 ms target, and inputs dense with real secrets (one every 18 to 24
characters): one secret repeated (each distinct secret is decided once, then
the text is spliced in bulk) and all of them distinct (a placeholder each).
"""

from __future__ import annotations

import argparse

from render_parse import _timeit  # bench/ is on sys.path when run as a script

from aw_lookahead.prompts import render_messages
from aw_lookahead.redact import Redactor
from aw_lookahead.trajectory import Trajectory, Turn


def _history(turns: int) -> Trajectory:
    def obs(i: int) -> str:
        lines = [f"src/mod{i}.py:{j}: def f{i}_{j}(x): return x" for j in range(8)]
        if i % 10 == 0:
            lines.append(f"OPENAI_API_KEY=sk-proj-{'Ab3dEf6h' * 5}{i:04d}")
        return "\n".join(lines)

    return Trajectory(
        domain="terminal",
        task="Refactor the project and keep the tests green",
        turns=[
            Turn(
                action=[{"keystrokes": f"grep -rn 'def f{i}' src/ | head\n", "duration": 1.0}],
                observation=obs(i),
            )
            for i in range(turns)
        ],
    )


def _adversarial(size: int) -> dict[str, tuple[str, bool]]:
    """name -> (text, held to the 50 ms target)."""

    def fill(unit: str, head: str = "") -> str:
        return (head + unit * (size // len(unit) + 1))[:size]

    n = size // len("password=v0000000x ")  # as many distinct secrets as fit

    return {
        "ordinary output (baseline)": (fill("src/mod.py:12: def f(x): return x  # code\n"), True),
        "PEM headers, no end": (fill("-----BEGIN RSA PRIVATE KEY-----x"), True),
        "one JWT-like run": (fill("eyJ"), True),
        "base64 after an AWS word": (fill("Ab3/", "aws secret "), True),
        "URL of colons": (fill("a:", "https://"), True),
        "runs of dashes": (fill("-"), True),
        "dense: password=...": (fill("password=hunter2x "), False),
        "dense: Bearer ...": (fill("Bearer abcdefghijklmnop "), False),
        "dense: JWTs": (fill("eyJhbGciOi.eyJ"), False),
        "dense: distinct password=": ("".join(f"password=v{i:07d}x " for i in range(n)), False),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--mib", type=float, default=1.0, help="size of each adversarial input")
    args = ap.parse_args()
    traj = _history(args.turns)
    action = [{"keystrokes": "pytest -q\n", "duration": 30}]
    messages = render_messages(traj, action)
    size = sum(len(m["content"]) for m in messages)
    redactor = Redactor()
    assert "sk-proj-" not in str(redactor.messages(messages))
    render = _timeit(lambda: render_messages(traj, action), args.repeat)
    cold = _timeit(lambda: Redactor().messages(messages), args.repeat)
    warm = _timeit(lambda: redactor.messages(messages), args.repeat)
    print(f"prompt: {args.turns} turns, {len(messages)} messages, {size:,} characters")
    print(f"render_messages (baseline)  median {render[0]:.3f} ms  p95 {render[1]:.3f} ms")
    print(f"Redactor.messages, cold     median {cold[0]:.3f} ms  p95 {cold[1]:.3f} ms")
    print(f"Redactor.messages, warm     median {warm[0]:.3f} ms  p95 {warm[1]:.3f} ms")
    size = int(args.mib * (1 << 20))
    print(f"\n{args.mib:g} MiB inputs, Redactor.text on a fresh redactor (median of 5)")
    base = 0.0
    for name, (text, targeted) in _adversarial(size).items():
        med = _timeit(lambda text=text: Redactor().text(text), 5)[0]
        base = base or med
        verdict = ("ok" if med <= 50 * args.mib else "OVER") + " (target 50 ms/MiB)"
        verdict = verdict if targeted else ""
        print(f"{name:28} {med:8.1f} ms  {med / base:5.2f}x baseline  {verdict}")


if __name__ == "__main__":
    main()
