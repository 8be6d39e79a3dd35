"""What judging shell text by effect costs per line, against a plain tokenizer in the same run.

Classifies every line of the shell-effects corpus (``tests/shell_corpus_support.py``)
with the parse-based classifier, uncached (the parse cache is emptied before each
timed call, outside the timer), and reports the median and p95 per line;
the baseline is ``shlex.split`` of the same lines (what the old word-list rule paid
before its checks). Also times adversarial inputs: 1 MiB of one word, 1 MiB of
nested quotes (both over the size cap), a 64 KiB heredoc, 4,000 ``&&``-chained
commands, 250 KiB of ``;``-separated commands.

    .venv/bin/python bench/shell_effects.py [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from aw_lookahead.lookahead import shell_parse
from aw_lookahead.lookahead.routing import is_read_only_command
from aw_lookahead.lookahead.shell_effects import _text_effects
from shell_corpus_support import DESTROYS, HARMLESS, OVERWRITES


def _forget_parses() -> None:
    """Empty the shared parse cache (one parse per text per process), so every call parses."""
    shell_parse._parse_short.cache_clear()
    shell_parse._parse_long.cache_clear()


def _per_line(fn: Callable[[str], object], lines: list[str], rounds: int) -> list[float]:
    best: list[float] = [float("inf")] * len(lines)
    for _ in range(rounds):
        for i, line in enumerate(lines):
            _forget_parses()
            start = time.perf_counter()
            fn(line)
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def _tokens(line: str) -> object:
    try:
        return shlex.split(line)
    except ValueError:
        return line.split()


def _stats(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_us": round(statistics.median(ordered) * 1e6, 1),
        "p95_us": round(ordered[int(0.95 * (len(ordered) - 1))] * 1e6, 1),
    }


def run(rounds: int) -> dict[str, object]:
    lines = [*DESTROYS, *OVERWRITES, *HARMLESS]
    big = {
        "1 MiB word": "a" * (1 << 20),
        "1 MiB nested quotes": "echo " + "\"'" * (1 << 19),
        "64 KiB heredoc": "cat > f <<'EOF'\n" + "x = 1\n" * 10_900 + "EOF",
        "4,000 chained commands": " && ".join(["ls -la"] * 4000),
        "250 KiB of commands": "ls -la; " * 32_000,
    }
    adversarial = {}
    for name, text in big.items():
        _forget_parses()
        start = time.perf_counter()
        _text_effects(text, 0)
        adversarial[name] = round((time.perf_counter() - start) * 1e3, 2)
    return {
        "lines": len(lines),
        "effects": _stats(_per_line(lambda t: _text_effects(t, 0), lines, rounds)),
        "read_only_router": _stats(_per_line(is_read_only_command, lines, rounds)),
        "baseline_shlex": _stats(_per_line(_tokens, lines, rounds)),
        "adversarial_ms": adversarial,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    print(f"{result['lines']} corpus lines, best of {args.rounds} rounds per line")
    for key in ("effects", "read_only_router", "baseline_shlex"):
        print(f"  {key:17} {result[key]}")
    print(f"  adversarial (ms)  {result['adversarial_ms']}")


if __name__ == "__main__":
    main()
