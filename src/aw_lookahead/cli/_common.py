"""Options shared by verbs that talk to a world-model server."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from aw_lookahead.endpoint import (
    DEFAULT_BASE_URL,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    JUDGE_ENV_BASE_URL,
    JUDGE_ENV_MODEL,
)
from aw_lookahead.errors import UsageError
from aw_lookahead.prompts import PromptSet
from aw_lookahead.worldmodel.openai_api import OpenAIWorldModel


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """``--base-url``, ``--model``, ``--api-key``, ``--timeout`` with environment defaults."""
    parser.add_argument(
        "--base-url",
        default=os.environ.get(ENV_BASE_URL, DEFAULT_BASE_URL),
        help=f"OpenAI-compatible endpoint (env {ENV_BASE_URL}; default %(default)s)",
    )
    parser.add_argument(
        "--model",
        default=os.environ.get(ENV_MODEL),
        help=f"served model name (env {ENV_MODEL}; default: the only model the server serves)",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get(ENV_API_KEY),
        help=f"API key (env {ENV_API_KEY}; local servers accept any value)",
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds per request (default %(default)s)"
    )


def add_judge_options(
    parser: argparse._ActionsContainer, *, model_help: str = "judge model"
) -> None:
    """``--judge-base-url``, ``--judge-model``, ``--judge-api-key`` with environment defaults.

    One judge endpoint for every verb that scores with an LLM judge (``eval judge``,
    ``train --method grpo``); ``model_help`` says what a missing model means there.
    """
    parser.add_argument(
        "--judge-model",
        default=os.environ.get(JUDGE_ENV_MODEL),
        help=f"{model_help} (env {JUDGE_ENV_MODEL})",
    )
    parser.add_argument(
        "--judge-base-url",
        default=os.environ.get(JUDGE_ENV_BASE_URL),
        help=f"judge endpoint, any OpenAI-compatible server (env {JUDGE_ENV_BASE_URL})",
    )
    parser.add_argument("--judge-api-key", default=None, help="the judge endpoint's API key")


def add_prompts_option(parser: argparse.ArgumentParser) -> None:
    """``--prompts FOLDER``: system prompt overrides for every verb that renders prompts."""
    parser.add_argument(
        "--prompts",
        default=None,
        help="folder of system prompt overrides: <domain>.md / <domain>.txt or the reference "
        "layout <domain>/system_prompt.txt; {placeholders} are filled or removed",
    )


def add_tool_context_option(p: argparse.ArgumentParser) -> None:
    """``--tool-context`` (``mcp``, ``proxy``): where MCP tool definitions go in a prompt."""
    p.add_argument(
        "--tool-context",
        choices=["compact", "full"],
        default="compact",
        help="compact: tool names in the system prompt, the called tool's definition in its "
        "turn (fits a 4K-context model); full: every definition in the system prompt "
        "(long-context models trained on that layout) (default %(default)s)",
    )


def prompts_from_args(args: argparse.Namespace) -> PromptSet | None:
    """The :class:`PromptSet` of ``--prompts`` / ``--tool-context`` (``None``: the default)."""
    folder = getattr(args, "prompts", None)
    full = getattr(args, "tool_context", "compact") == "full"
    if not folder and not full:
        return None
    return PromptSet(folder, tool_layout="full" if full else "compact")


def world_model_from_args(args: argparse.Namespace, **kwargs: Any) -> OpenAIWorldModel:
    if "prompts" not in kwargs:
        kwargs["prompts"] = prompts_from_args(args)
    return OpenAIWorldModel(
        args.model,
        base_url=args.base_url,
        api_key=args.api_key,
        timeout=kwargs.pop("timeout", args.timeout),
        retries=kwargs.pop("retries", 1),
        **kwargs,
    )


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def output_dir(path: str | Path, option: str) -> Path:
    """``path`` as a folder we can write into (created); a one-line UsageError otherwise."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"{option} {p} is a file; give a folder (it is created if missing)")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{option} {p}: cannot create the folder ({exc.strerror})") from exc
    if not os.access(p, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {p}: the folder is not writable")
    return p


def output_file(path: str | Path, option: str) -> Path:
    """``path`` as a file we can write (its folder created); a one-line UsageError otherwise."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{option} {p} is a folder; give a file name, e.g. {p / 'out.jsonl'}")
    output_dir(p.parent, f"{option} folder")
    if p.exists() and not os.access(p, os.W_OK):
        raise UsageError(f"{option} {p}: the file is not writable")
    return p


def refuse_to_replace(paths: Iterable[str | Path], option: str, *, append: bool = False) -> None:
    """A one-line UsageError when any of ``paths`` exists with content: outputs are never
    replaced without ``--force`` (or extended without ``--append``, where a verb has one)."""
    existing = [p for p in map(Path, paths) if p.is_file() and p.stat().st_size > 0]
    if not existing:
        return
    more = f" (and {len(existing) - 1} more)" if len(existing) > 1 else ""
    choice = "--force to replace it or --append to add to it" if append else "--force to replace"
    raise UsageError(f"{option}: {existing[0]} exists{more}; pass {choice}, or choose a new path")
