"""The ``aw-lookahead`` command. ``main(argv) -> int`` is the entry point (and what tests call).

Each verb is a module in this package exposing ``register(subparsers)``; the
module adds its parser and sets ``func=run`` with ``run(args) -> int``.
Modules are imported only to build the parser; heavy work stays inside ``run``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from aw_lookahead._version import __version__
from aw_lookahead.errors import AwLookaheadError, UsageError

VERB_MODULES: tuple[str, ...] = (
    "simulate",
    "models",
    "serve",
    "stats",
    "mcp",
    "proxy",
    "eval",
    "record",
    "data",
    "train",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aw-lookahead",
        description="Predictive lookahead for tool-using agents: a language world model "
        "predicts each action's outcome before it runs.",
    )
    parser.add_argument("--version", action="version", version=f"aw-lookahead {__version__}")
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for name in VERB_MODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 run-time failure, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    try:
        return int(func(args))
    except UsageError as exc:
        print(f"aw-lookahead {args.verb}: error: {exc}", file=sys.stderr)
        return 2
    except AwLookaheadError as exc:
        print(f"aw-lookahead {args.verb}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"aw-lookahead {args.verb}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader left (`| head`): no traceback; stdout to devnull so exit's flush is quiet
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def console_main() -> None:  # pragma: no cover - exercised through the console script
    sys.exit(main())
