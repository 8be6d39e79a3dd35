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
    # trajectory
    "Action": "aw_lookahead.trajectory",
    "Domain": "aw_lookahead.trajectory",
    "JsonlWriter": "aw_lookahead.trajectory",
    "Trajectory": "aw_lookahead.trajectory",
    "Turn": "aw_lookahead.trajectory",
    "TurnSample": "aw_lookahead.trajectory",
    "load_turn_samples": "aw_lookahead.trajectory",
    "read_agentworldbench": "aw_lookahead.trajectory",
    "read_trajectories": "aw_lookahead.trajectory",
    "write_agentworldbench": "aw_lookahead.trajectory",
    "write_trajectories": "aw_lookahead.trajectory",
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

__all__ = [
    "Action",
    "AwLookaheadError",
    "ConfigError",
    "ContextTooLongError",
    "Decision",
    "DecisionKind",
    "Domain",
    "DownstreamError",
    "FunctionWorldModel",
    "JsonlWriter",
    "JudgeError",
    "LLMJudge",
    "LocalServer",
    "Lookahead",
    "LookaheadMiddleware",
    "LookaheadNode",
    "MissingExtraError",
    "ModelNotServedError",
    "OpenAIWorldModel",
    "Outcome",
    "Prediction",
    "PredictionCache",
    "PromptSet",
    "ReplyParseError",
    "RiskRouter",
    "RolloutResult",
    "RuleJudge",
    "RunError",
    "SelectResult",
    "ServerError",
    "ServerStartError",
    "ServerUnreachableError",
    "Signal",
    "SyncWorldModel",
    "TerminalSandbox",
    "Trajectory",
    "TrajectoryError",
    "Turn",
    "TurnSample",
    "Usage",
    "UsageError",
    "Verdict",
    "WorldModel",
    "WorldModelError",
    "WorldModelTimeoutError",
    "__version__",
    "load_turn_samples",
    "parse_reply",
    "read_agentworldbench",
    "read_trajectories",
    "render_messages",
    "start_embedded_server",
    "write_agentworldbench",
    "write_trajectories",
]


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
    from .errors import (
        AwLookaheadError,
        ConfigError,
        ContextTooLongError,
        DownstreamError,
        JudgeError,
        MissingExtraError,
        ModelNotServedError,
        ReplyParseError,
        RunError,
        ServerError,
        ServerStartError,
        ServerUnreachableError,
        TrajectoryError,
        UsageError,
        WorldModelError,
        WorldModelTimeoutError,
    )
    from .langgraph import LookaheadMiddleware, LookaheadNode
    from .lookahead import (
        Decision,
        DecisionKind,
        LLMJudge,
        Lookahead,
        Outcome,
        PredictionCache,
        RiskRouter,
        RolloutResult,
        RuleJudge,
        SelectResult,
        Signal,
        Verdict,
    )
    from .prompts import PromptSet, parse_reply, render_messages
    from .sandbox import TerminalSandbox
    from .serving import LocalServer, start_embedded_server
    from .trajectory import (
        Action,
        Domain,
        JsonlWriter,
        Trajectory,
        Turn,
        TurnSample,
        load_turn_samples,
        read_agentworldbench,
        read_trajectories,
        write_agentworldbench,
        write_trajectories,
    )
    from .worldmodel import (
        FunctionWorldModel,
        OpenAIWorldModel,
        Prediction,
        SyncWorldModel,
        Usage,
        WorldModel,
    )
