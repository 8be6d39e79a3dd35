"""aw-lookahead: predictive lookahead for tool-using agents.

Before an action runs for real, a language world model predicts the
environment's next observation; predicted failures, no-ops and risks are
pruned and the best candidate is executed.

Public names are imported lazily, so ``import aw_lookahead`` stays light and
names from optional extras (``LookaheadMiddleware`` needs ``[langgraph]``)
only fail, with the pip line, when used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # trajectory schema and the benchmark format
    "Action": "aw_lookahead.trajectory",
    "Domain": "aw_lookahead.trajectory",
    "JsonlWriter": "aw_lookahead.trajectory",
    "Trajectory": "aw_lookahead.trajectory",
    "Turn": "aw_lookahead.trajectory",
    "TurnSample": "aw_lookahead.trajectory",
    "read_trajectories": "aw_lookahead.trajectory",
    "write_trajectories": "aw_lookahead.trajectory",
    "load_turn_samples": "aw_lookahead.agentworldbench",
    "read_agentworldbench": "aw_lookahead.agentworldbench",
    "write_agentworldbench": "aw_lookahead.agentworldbench",
    # prompts
    "PromptSet": "aw_lookahead.prompts",
    "parse_reply": "aw_lookahead.prompts",
    "render_messages": "aw_lookahead.prompts",
    # world models
    "FunctionWorldModel": "aw_lookahead.worldmodel",
    "OpenAIWorldModel": "aw_lookahead.worldmodel",
    "Prediction": "aw_lookahead.worldmodel",
    "SyncWorldModel": "aw_lookahead.worldmodel",
    "Usage": "aw_lookahead.worldmodel",
    "WorldModel": "aw_lookahead.worldmodel",
    # engine
    "Decision": "aw_lookahead.lookahead",
    "DecisionKind": "aw_lookahead.lookahead",
    "LLMJudge": "aw_lookahead.lookahead",
    "Lookahead": "aw_lookahead.lookahead",
    "Outcome": "aw_lookahead.lookahead",
    "PredictionCache": "aw_lookahead.lookahead",
    "RiskRouter": "aw_lookahead.lookahead",
    "RolloutResult": "aw_lookahead.lookahead",
    "RuleJudge": "aw_lookahead.lookahead",
    "SelectResult": "aw_lookahead.lookahead",
    "Signal": "aw_lookahead.lookahead",
    "Verdict": "aw_lookahead.lookahead",
    # sandbox and serving
    "LocalServer": "aw_lookahead.serving",
    "TerminalSandbox": "aw_lookahead.sandbox",
    "start_embedded_server": "aw_lookahead.serving",
    # framework adapters (extras)
    "LookaheadMiddleware": "aw_lookahead.langgraph",
    "LookaheadNode": "aw_lookahead.langgraph",
    # errors
    "AwLookaheadError": "aw_lookahead.errors",
    "ConfigError": "aw_lookahead.errors",
    "ContextTooLongError": "aw_lookahead.errors",
    "DownstreamError": "aw_lookahead.errors",
    "JudgeError": "aw_lookahead.errors",
    "MissingExtraError": "aw_lookahead.errors",
    "ModelNotServedError": "aw_lookahead.errors",
    "ReplyParseError": "aw_lookahead.errors",
    "RunError": "aw_lookahead.errors",
    "ServerError": "aw_lookahead.errors",
    "ServerStartError": "aw_lookahead.errors",
    "ServerUnreachableError": "aw_lookahead.errors",
    "TrajectoryError": "aw_lookahead.errors",
    "UsageError": "aw_lookahead.errors",
    "WorldModelError": "aw_lookahead.errors",
    "WorldModelTimeoutError": "aw_lookahead.errors",
}

# Derived from _EXPORTS, the one list of public names; tests/test_public_api.py checks it.
__all__ = sorted([*_EXPORTS, "__version__"])  # noqa: PLE0605 - derived on purpose


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'aw_lookahead' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:
    # The same names for type checkers (`X as X` marks a re-export); a test keeps it equal
    # to _EXPORTS.
    from .agentworldbench import load_turn_samples as load_turn_samples
    from .agentworldbench import read_agentworldbench as read_agentworldbench
    from .agentworldbench import write_agentworldbench as write_agentworldbench
    from .errors import AwLookaheadError as AwLookaheadError
    from .errors import ConfigError as ConfigError
    from .errors import ContextTooLongError as ContextTooLongError
    from .errors import DownstreamError as DownstreamError
    from .errors import JudgeError as JudgeError
    from .errors import MissingExtraError as MissingExtraError
    from .errors import ModelNotServedError as ModelNotServedError
    from .errors import ReplyParseError as ReplyParseError
    from .errors import RunError as RunError
    from .errors import ServerError as ServerError
    from .errors import ServerStartError as ServerStartError
    from .errors import ServerUnreachableError as ServerUnreachableError
    from .errors import TrajectoryError as TrajectoryError
    from .errors import UsageError as UsageError
    from .errors import WorldModelError as WorldModelError
    from .errors import WorldModelTimeoutError as WorldModelTimeoutError
    from .langgraph import LookaheadMiddleware as LookaheadMiddleware
    from .langgraph import LookaheadNode as LookaheadNode
    from .lookahead import Decision as Decision
    from .lookahead import DecisionKind as DecisionKind
    from .lookahead import LLMJudge as LLMJudge
    from .lookahead import Lookahead as Lookahead
    from .lookahead import Outcome as Outcome
    from .lookahead import PredictionCache as PredictionCache
    from .lookahead import RiskRouter as RiskRouter
    from .lookahead import RolloutResult as RolloutResult
    from .lookahead import RuleJudge as RuleJudge
    from .lookahead import SelectResult as SelectResult
    from .lookahead import Signal as Signal
    from .lookahead import Verdict as Verdict
    from .prompts import PromptSet as PromptSet
    from .prompts import parse_reply as parse_reply
    from .prompts import render_messages as render_messages
    from .sandbox import TerminalSandbox as TerminalSandbox
    from .serving import LocalServer as LocalServer
    from .serving import start_embedded_server as start_embedded_server
    from .trajectory import Action as Action
    from .trajectory import Domain as Domain
    from .trajectory import JsonlWriter as JsonlWriter
    from .trajectory import Trajectory as Trajectory
    from .trajectory import Turn as Turn
    from .trajectory import TurnSample as TurnSample
    from .trajectory import read_trajectories as read_trajectories
    from .trajectory import write_trajectories as write_trajectories
    from .worldmodel import FunctionWorldModel as FunctionWorldModel
    from .worldmodel import OpenAIWorldModel as OpenAIWorldModel
    from .worldmodel import Prediction as Prediction
    from .worldmodel import SyncWorldModel as SyncWorldModel
    from .worldmodel import Usage as Usage
    from .worldmodel import WorldModel as WorldModel
