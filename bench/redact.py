"""Cost of redacting one world-model request, and of 1 MiB adversarial inputs.

    python bench/redact.py [--turns 50] [--repeat 300] [--mib 1] [--rounds 7]
                           [--baseline main | --baseline none]

Prints the median and p95 per call of ``Redactor.messages`` on the rendered
messages, cold (a fresh redactor each call) and warm (the history seen
before, as for the K candidates of a step and every later step), and, as the
baseline measured in the same run, of ``render_messages`` itself (what
building the request costs anyway). Every tenth turn carries a secret, so
the replacement path is measured too.

Then, per 1 MiB input, ``Redactor.text`` on a fresh redactor: ordinary tool
output, inputs built to make regular expressions backtrack (runs of PEM
headers, JWT-like runs, base64 after an AWS word, URLs full of colons, runs
of dashes, a 1 MiB single token, camelCase keys, non-ASCII letters before
tokens) and inputs dense with real secrets (one every 18 to 24 characters:
one secret repeated, and all of them distinct). Each row prints the median
CPU time of the process (``time.process_time``: on a shared machine it moves
far less with the load than wall time, which is printed too), a pass/fail
verdict against the target of 50 ms per MiB, and the same input through the
``--baseline`` revision's redactor (``git archive`` of that revision's
``src/aw_lookahead``, imported under another name), timed in turns with this
tree's in the same run, with the verdict for both and the speed-up.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib
import io
import itertools
import logging
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

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


def _adversarial(size: int) -> dict[str, str]:
    """name -> text of ``size`` characters (about)."""

    def fill(unit: str, head: str = "") -> str:
        return (head + unit * (size // len(unit) + 1))[:size]

    n = size // len("password=v0000000x ")  # as many distinct secrets as fit
    # Prose with characters above U+00FF (a wide text), before distinct secrets.
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")

    def units(unit: Callable[[int], str], room: int = size) -> str:
        """``unit(0) + unit(1) + …``, as many whole units as fit in ``room`` characters."""
        parts, total = [], 0
        for i in itertools.count():
            part = unit(i)
            if total + len(part) > room:
                return "".join(parts)
            parts.append(part)
            total += len(part)
        raise AssertionError("unreachable")

    return {
        "ordinary output": fill("src/mod.py:12: def f(x): return x  # code\n"),
        "PEM headers, no end": fill("-----BEGIN RSA PRIVATE KEY-----x"),
        "one JWT-like run": fill("eyJ"),
        "base64 after an AWS word": fill("Ab3/", "aws secret "),
        "URL of colons": fill("a:", "https://"),
        "runs of dashes": fill("-"),
        "one 1 MiB token": fill("Ab3dEf6hIj"),
        "many key=value pairs": fill("user_id=1234 mode=fast lang=en "),
        "non-ASCII letter before tokens": fill(
            "ésk-proj-Ab3dEf6hAb3dEf6hAb3dEf6h 密ghp_" + "a" * 36 + " "
        ),
        "dense: password=...": fill("password=hunter2x "),
        "dense: Bearer ...": fill("Bearer abcdefghijklmnop "),
        "dense: JWTs": fill("eyJhbGciOi.eyJ"),
        "dense: camelCase keys": fill('{"userPassword": "hunter2x", "accessToken": "t0k3n-abc"} '),
        "dense: distinct password=": "".join(f"password=v{i:07d}x " for i in range(n)),
        "dense: distinct, é first": "é" + "".join(f"password=v{i:07d}x " for i in range(n)),
        "dense: distinct password/token": units(
            lambda i: f"{('password', 'token')[i % 2]}=v{i:07d}x "
        ),
        "dense: distinct mixed case": units(
            lambda i: f"{('PASSWORD', 'Password')[i % 2]}=v{i:07d}x "
        ),
        "dense: distinct JSON pairs": units(lambda i: f'"password": "v{i:07d}x", '),
        "dense: half distinct": units(
            lambda i: f"password=v{i:07d}x " if i % 2 else f"password=hunter{i % 16:02d} "
        ),
        "dense: distinct --password": units(lambda i: f"--password v{i:07d}x "),
        "dense: distinct bare/quoted": units(
            lambda i: f'secret="v{i:07d}x" ' if i % 2 else f"secret=v{i:07d}x "
        ),
        "dense: distinct API_KEY=": units(lambda i: f"API_KEY=v{i:07d}x\n"),
        "dense: distinct, README first": readme
        + units(lambda i: f"password=v{i:07d}x ", size - len(readme)),
    }


def _realistic(size: int) -> dict[str, str]:
    """name -> text of ``size`` characters: files of this repository, concatenated in path
    order and repeated (real code, prose and recorded command output, a few non-ASCII
    characters in each, as real text has)."""
    root = Path(__file__).resolve().parent.parent

    def fill(*patterns: str) -> str:
        paths = sorted({p for pattern in patterns for p in root.glob(pattern)})
        unit = "".join(p.read_text(encoding="utf-8") for p in paths)
        return (unit * (size // len(unit) + 1))[:size]

    return {
        "real: src/**/*.py": fill("src/aw_lookahead/**/*.py"),
        "real: tests/**/*.py": fill("tests/**/*.py"),
        "real: docs/*.md, README.md": fill("docs/*.md", "README.md"),
        "real: recorded terminal JSONL": fill("examples/data/*.jsonl", "tests/data/*.jsonl"),
    }


def _baseline(rev: str) -> type[Redactor]:
    """The ``Redactor`` class of revision ``rev`` of this repository, imported beside ours."""
    root = Path(__file__).resolve().parent.parent
    tar = subprocess.run(
        ["git", "-C", str(root), "archive", rev, "src/aw_lookahead"],
        capture_output=True,
        check=False,
    )
    if tar.returncode != 0:
        sys.exit(f"bench/redact.py: cannot read {rev!r}: {tar.stderr.decode().strip()}")
    where = Path(tempfile.mkdtemp(prefix="redact-baseline-"))
    atexit.register(shutil.rmtree, where, True)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(where, filter="data")
    name = "aw_lookahead_redact_baseline"
    package = types.ModuleType(name)
    package.__path__ = [str(where / "src" / "aw_lookahead")]  # no __init__: redact alone
    sys.modules[name] = package
    return importlib.import_module(f"{name}.redact").Redactor  # type: ignore[no-any-return]


def _cost(fn: Callable[[], object]) -> tuple[float, float]:
    """CPU and wall milliseconds of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000


def _fresh(cls: type[Redactor], text: str) -> str:
    return cls().text(text)


def _same(ours: type[Redactor], base: type[Redactor], key: bytes, text: str) -> str:
    """Whether both redactors give the same output; past the cap of distinct secrets ours
    differs by design (one shared placeholder), and then every secret must still be gone."""
    redactor = ours(key=key)
    mine, theirs = redactor.text(text), base(key=key).text(text)
    if mine == theirs:
        return "identical"
    if getattr(redactor, "over_cap", 0) and re.sub(r"\[REDACTED_\w+\]", "", theirs) == re.sub(
        r"\[REDACTED_\w+\]", "", mine
    ):
        return f"same apart from placeholders ({redactor.over_cap} past the cap)"
    return "DIFFERS"


def _verdict(ms: float, target: float) -> str:
    return "PASS" if ms <= target else "FAIL"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--mib", type=float, default=1.0, help="size of each adversarial input")
    ap.add_argument("--rounds", type=int, default=7, help="calls per adversarial input and side")
    ap.add_argument("--only", default="", help="only the inputs whose name holds this")
    ap.add_argument("--baseline", default="main", help="git revision to compare with, or 'none'")
    args = ap.parse_args()
    logging.disable(logging.WARNING)  # the cap's warning, expected for the distinct row
    traj = _history(args.turns)
    action = [{"keystrokes": "pytest -q\n", "duration": 30}]
    messages = render_messages(traj, action)
    size = sum(len(m["content"]) for m in messages)
    redactor = Redactor()
    assert "sk-proj-" not in str(redactor.messages(messages))
    if not args.only:
        render = _timeit(lambda: render_messages(traj, action), args.repeat)
        cold = _timeit(lambda: Redactor().messages(messages), args.repeat)
        warm = _timeit(lambda: redactor.messages(messages), args.repeat)
        print(f"prompt: {args.turns} turns, {len(messages)} messages, {size:,} characters")
        print(f"render_messages (baseline)  median {render[0]:.3f} ms  p95 {render[1]:.3f} ms")
        print(f"Redactor.messages, cold     median {cold[0]:.3f} ms  p95 {cold[1]:.3f} ms")
        print(f"Redactor.messages, warm     median {warm[0]:.3f} ms  p95 {warm[1]:.3f} ms")
        print()
    base = None if args.baseline == "none" else _baseline(args.baseline)
    target = 50 * args.mib
    print(
        f"{args.mib:g} MiB inputs, Redactor.text on a fresh redactor, median of {args.rounds}: "
        f"CPU ms (wall ms); target {target:g} ms CPU"
        + (f"; baseline: {args.baseline}, timed in turns with this tree" if base else "")
    )
    key = b"bench-key-16byte"
    failed = 0
    size = int(args.mib * (1 << 20))
    for name, text in {**_adversarial(size), **_realistic(size)}.items():
        if args.only not in name:
            continue
        ours: list[tuple[float, float]] = []
        theirs: list[tuple[float, float]] = []
        for i in range(args.rounds):
            pair = [(ours, Redactor)] + ([(theirs, base)] if base else [])
            for samples, cls in pair[:: 1 if i % 2 else -1]:
                samples.append(_cost(functools.partial(_fresh, cls, text)))
        cpu = statistics.median(c for c, _ in ours)
        wall = statistics.median(w for _, w in ours)
        failed += cpu > target
        line = f"{name:31} {cpu:7.1f} ({wall:6.1f})  {_verdict(cpu, target)}"
        if base is not None:
            was = statistics.median(c for c, _ in theirs)
            was_wall = statistics.median(w for _, w in theirs)
            line += (
                f"   baseline {was:7.1f} ({was_wall:6.1f})  {_verdict(was, target)}"
                f"   {was / cpu:5.2f}x faster  output {_same(Redactor, base, key, text)}"
            )
        print(line)
    print(f"\n{failed or 'no'} input{'' if failed == 1 else 's'} over the target")


if __name__ == "__main__":
    main()
