"""Redaction's cost: linear in the text, at most 1 s of CPU per MiB, never on the event loop.

    python bench/redact.py [--rounds 3] [--repeat 100] [--only WORD] [--json]

1. One world-model request (a 50-turn history, a secret every tenth turn):
   ``Redactor.messages`` cold (a fresh redactor) and warm (the history seen
   before), beside ``render_messages`` itself as the baseline of the same run.
2. Per family of rules, an input built to make its patterns work hardest (runs
   of a token's prefix, of PEM headers, of secret names without values, of
   command words without their option, capitals, dashes, colons, dense and
   distinct secrets, …) and real text of this repository, each at 64 KiB,
   256 KiB and 1 MiB: ``Redactor.text`` on a fresh redactor, the median CPU
   time of the process (``time.process_time``: a shared machine moves it far
   less than wall time). A row is **linear** when its 1 MiB time is at most
   twice 16 times its 64 KiB time (plus 5 ms of timer noise), and **within
   budget** at most 1,000 ms for the MiB.
3. The event loop's longest stall while 1 MiB of the slowest family is
   redacted through :func:`~aw_lookahead.redact.redact_off_loop` (a worker
   thread), a task ticking every millisecond meanwhile; and, as the baseline,
   the same redaction called on the loop. Bound: 50 ms.

Exits non-zero when a bound is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from render_parse import _timeit  # bench/ is on sys.path when run as a script

from aw_lookahead.prompts import render_messages
from aw_lookahead.redact import Redactor, redact_off_loop
from aw_lookahead.trajectory import Trajectory, Turn

_ROOT = Path(__file__).resolve().parent.parent
_SIZES = {"64 KiB": 64 << 10, "256 KiB": 256 << 10, "1 MiB": 1 << 20}
_BUDGET_MS = 1000.0
_STALL_MS = 50.0


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


def _fill(unit: str, size: int, head: str = "") -> str:
    return (head + unit * (size // len(unit) + 1))[:size]


def _units(unit: Callable[[int], str], size: int) -> str:
    """``unit(0) + unit(1) + …``, as many whole units as fit in ``size`` characters."""
    parts, total = [], 0
    for i in itertools.count():
        part = unit(i)
        if total + len(part) > size:
            break
        parts.append(part)
        total += len(part)
    return "".join(parts)


def _real(size: int, *patterns: str) -> str:
    paths = sorted({p for pattern in patterns for p in _ROOT.glob(pattern)})
    return _fill("".join(p.read_text(encoding="utf-8") for p in paths), size)


_PREFIXES = (
    "sk-ant-", "sk-", "AIza", "AKIA", "ghp_", "github_pat_", "glpat-", "xoxb-", "sk_live_",
    "hf_", "npm_", "pypi-AgE", "SG.", "ya29.", "GOCSPX-", "dop_v1_", "shpat_", "dapi", "eyJ",
)  # fmt: skip

FAMILIES: dict[str, Callable[[int], str]] = {
    "ordinary output": lambda n: _fill("src/mod.py:12: def f(x): return x  # code\n", n),
    "provider prefixes, no token": lambda n: _fill(" ".join(_PREFIXES) + " ", n),
    "prefixes glued, a letter first": lambda n: _fill("é" + "x".join(_PREFIXES), n),
    "tokens after non-ASCII letters": lambda n: _fill(
        "ésk-proj-Ab3dEf6hAb3dEf6hAb3dEf6h 密ghp_" + "a" * 36 + " ", n
    ),
    "one long token": lambda n: _fill("Ab3dEf6hIj", n),
    "PEM headers, no end": lambda n: _fill("-----BEGIN RSA PRIVATE KEY-----x", n),
    "one JWT-like run": lambda n: _fill("eyJ", n),
    "base64 after an AWS word": lambda n: _fill("Ab3/", n, "aws secret "),
    "39-character runs near aws": lambda n: _fill("A" * 39 + " ", n, "aws "),
    "URL of colons": lambda n: _fill("a:", n, "https://"),
    "URLs without @": lambda n: _fill("://user:pass", n),
    "runs of dashes": lambda n: _fill("-", n),
    "flags without values": lambda n: _fill("--password --db-token -u -uuser --user ", n),
    "command words, no option": lambda n: _fill("mysql sshpass login curl -u ", n),
    "one command, many words": lambda n: _fill(" mysql", n, "mysql"),
    "more command words, no option": lambda n: _fill(
        "htpasswd smbclient -U ldapsearch keytool ssh-keygen mongosh redis-cli -a echo x | ", n
    ),
    "colon lines, pass: and tags": lambda n: _fill("h:1:d:u:\npass: x <token>a auth=( pwd ", n),
    "netrc words": lambda n: _fill("machine h login u account a ", n),
    "header words": lambda n: _fill("Authorization Bearer Cookie AccountKey sig ", n),
    "capitals and underscores": lambda n: _fill("A_", n),
    "one capital run": lambda n: _fill("A", n),
    "secret names, no value": lambda n: _fill("password passwd token secret api_key пароль ", n),
    "secret names and signs": lambda n: _fill('password= token: "secret": %3D ', n),
    "percent-encoded": lambda n: _fill("user%5Bpassword%5D%3Dx%26", n),
    "dense: one password=": lambda n: _fill("password=hunter2x ", n),
    "dense: Bearer": lambda n: _fill("Bearer abcdefghijklmnop ", n),
    "dense: JSON pairs": lambda n: _fill('{"userPassword": "hunter2x", "accessToken": "t0k"} ', n),
    "dense: distinct password=": lambda n: _units(lambda i: f"password=v{i:07d}x ", n),
    "dense: distinct API_KEY=": lambda n: _units(lambda i: f"API_KEY=v{i:07d}x\n", n),
    "known secrets, near misses": lambda n: (
        "".join(f"token=v{i:07d}-secret\n" for i in range(256))
        + _units(lambda i: f"v{i % 256:07d}-secre ", n - 256 * 22)
    ),
    "real: src/**/*.py": lambda n: _real(n, "src/aw_lookahead/**/*.py"),
    "real: tests/**/*.py": lambda n: _real(n, "tests/**/*.py"),
    "real: docs/*.md, README.md": lambda n: _real(n, "docs/*.md", "README.md"),
}


def _cpu_ms(text: str, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        redactor = Redactor()
        start = time.process_time()
        redactor.text(text)
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def _longest_stall(text: str, off_loop: bool) -> float:
    """The longest gap, in ms, between ticks of a 1 ms ticker while ``text`` is redacted."""

    async def run() -> float:
        gaps: list[float] = []
        done = asyncio.Event()

        async def tick() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append((now - last) * 1000)
                last = now

        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.01)
        redactor = Redactor()
        if off_loop:
            await redact_off_loop(len(text), redactor.text, text)
        else:
            redactor.text(text)
        await asyncio.sleep(0.01)
        done.set()
        await ticker
        return max(gaps)

    return asyncio.run(run())


def _request(turns: int, repeat: int) -> dict[str, float]:
    traj = _history(turns)
    action = [{"keystrokes": "pytest -q\n", "duration": 30}]
    messages = render_messages(traj, action)
    warm_redactor = Redactor()
    assert "sk-proj-" not in str(warm_redactor.messages(messages))
    render = _timeit(lambda: render_messages(traj, action), repeat)
    cold = _timeit(lambda: Redactor().messages(messages), repeat)
    warm = _timeit(lambda: warm_redactor.messages(messages), repeat)
    return {
        "characters": sum(len(m["content"]) for m in messages),
        "render_ms": render[0],
        "cold_ms": cold[0],
        "warm_ms": warm[0],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="calls per input, the median is kept")
    ap.add_argument("--repeat", type=int, default=100, help="calls for the request timing")
    ap.add_argument("--only", default="", help="only the families whose name holds this")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the cap's warning, expected for the distinct rows
    out: dict[str, Any] = {"request": None if args.only else _request(50, args.repeat)}
    rows = []
    for name, make in FAMILIES.items():
        if args.only not in name:
            continue
        ms = {label: _cpu_ms(make(size), args.rounds) for label, size in _SIZES.items()}
        small, big = ms["64 KiB"], ms["1 MiB"]
        rows.append(
            {
                "family": name,
                "cpu_ms": ms,
                "growth": big / small if small else None,
                "linear": big <= 2 * 16 * small + 5,
                "within_budget": big <= _BUDGET_MS,
            }
        )
    out["rows"] = rows
    slowest = max(rows, key=lambda r: r["cpu_ms"]["1 MiB"])["family"] if rows else None
    if slowest is not None:
        text = FAMILIES[slowest](_SIZES["1 MiB"])
        off = _longest_stall(text, off_loop=True)
        on = _longest_stall(text, off_loop=False)
        out["loop"] = {"family": slowest, "off_loop_stall_ms": off, "on_loop_stall_ms": on}
    ok = all(r["linear"] and r["within_budget"] for r in rows) and (
        slowest is None or out["loop"]["off_loop_stall_ms"] <= _STALL_MS
    )
    out["ok"] = ok
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        _print(out)
    sys.exit(0 if ok else 1)


def _print(out: dict[str, Any]) -> None:
    if out["request"]:
        r = out["request"]
        print(
            f"request of 50 turns ({r['characters']:,} characters): Redactor.messages cold "
            f"{r['cold_ms']:.3f} ms, warm {r['warm_ms']:.3f} ms; "
            f"render_messages {r['render_ms']:.3f} ms (baseline)"
        )
    print(f"\nRedactor.text, fresh redactor, median CPU ms; budget {_BUDGET_MS:.0f} ms per MiB")
    print(f"{'family':34} {'64 KiB':>8} {'256 KiB':>8} {'1 MiB':>8} {'x64K':>6}  verdict")
    for row in out["rows"]:
        ms = row["cpu_ms"]
        growth = f"{row['growth']:6.1f}" if row["growth"] else "     -"
        verdict = ("linear" if row["linear"] else "NOT LINEAR") + (
            "" if row["within_budget"] else ", OVER BUDGET"
        )
        print(
            f"{row['family']:34} {ms['64 KiB']:8.1f} {ms['256 KiB']:8.1f} {ms['1 MiB']:8.1f}"
            f" {growth}  {verdict}"
        )
    if "loop" in out:
        loop = out["loop"]
        print(
            f"\nevent loop, 1 MiB of '{loop['family']}': longest stall "
            f"{loop['off_loop_stall_ms']:.1f} ms through redact_off_loop (bound {_STALL_MS:.0f}), "
            f"{loop['on_loop_stall_ms']:.1f} ms called on the loop (baseline)"
        )
    print("\nall bounds met" if out["ok"] else "\nA BOUND IS MISSED")


if __name__ == "__main__":
    main()
