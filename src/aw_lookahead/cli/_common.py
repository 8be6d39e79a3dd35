"""Options shared by verbs that talk to a world-model server."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from aw_lookahead.prompts import PromptSet
from aw_lookahead.worldmodel.openai_api import (
    DEFAULT_BASE_URL,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    OpenAIWorldModel,
)


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


def add_prompts_option(parser: argparse.ArgumentParser) -> None:
    """``--prompts FOLDER``: system prompt overrides for every verb that renders prompts."""
    parser.add_argument(
        "--prompts",
        default=None,
        help="folder of system prompt overrides: <domain>.md / <domain>.txt or the reference "
        "layout <domain>/system_prompt.txt; {placeholders} are filled or removed",
    )


def prompts_from_args(args: argparse.Namespace) -> PromptSet | None:
    """The :class:`PromptSet` named by ``--prompts`` (``None`` when not given)."""
    folder = getattr(args, "prompts", None)
    return PromptSet(folder) if folder else None


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
