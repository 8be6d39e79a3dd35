"""aw-lookahead: predictive lookahead for tool-using agents.

Before an action runs for real, a language world model predicts the
environment's next observation; predicted failures, no-ops and risks are
pruned and the best candidate is executed.

The root holds what an engine user needs: the trajectory schema and the
benchmark format, the world-model protocol with its base class and backends,
the engine (:class:`Lookahead`, its decisions, outcomes and judges) and the
errors. Everything else lives in its subpackage and is imported from there:

* framework adapters, each with its whole surface: :mod:`aw_lookahead.langgraph`
  (``LookaheadMiddleware``, ``LookaheadNode``, ``lookahead_condition``,
  ``ShadowMiddleware``, ...) and :mod:`aw_lookahead.mcp` (``build_server``,
  ``LookaheadProxy``, ...);
* plumbing: :mod:`aw_lookahead.prompts` (``render_messages``, ``parse_reply``,
  ``PromptSet``), :mod:`aw_lookahead.trajectory` (``JsonlWriter``),
  :mod:`aw_lookahead.serving` (``LocalServer``, ``start_embedded_server``),
  :mod:`aw_lookahead.sandbox` (``TerminalSandbox``).

Names are imported lazily, so ``import aw_lookahead`` stays light and a name
from an optional extra (``VLLMOfflineWorldModel`` needs ``[vllm]``) only
fails, with the pip line, when used.

One async/sync naming rule holds across the package: the async function or
method has the plain name and its blocking twin ends in ``_sync``
(``Lookahead.gate`` / ``gate_sync``, ``BaseWorldModel.predict`` /
``predict_sync``, ``TerminalSandbox.run`` / ``run_sync``,
``sandbox.record_trajectory`` / ``record_trajectory_sync``,
``datagen.terminal.generate_terminal`` / ``generate_terminal_sync``). The
blocking twins run on a background event loop, so they also work where an
event loop already runs. Two exceptions keep names fixed outside the package:
LangChain's hooks (``wrap_tool_call`` / ``awrap_tool_call``, ``invoke`` /
``ainvoke``), and Python's close protocol where the async close is ``aclose()``
(async generators, ``contextlib.aclosing``, httpx): there the blocking close
is ``close()`` (world models, the LangGraph middleware). No class
exists only to make another blocking.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

_EXPORTS: dict[str, str] = {
    # the trajectory schema
    "Action": "aw_lookahead.trajectory",
    "Domain": "aw_lookahead.trajectory",
    "Trajectory": "aw_lookahead.trajectory",
    "Turn": "aw_lookahead.trajectory",
    "TurnSample": "aw_lookahead.trajectory",
    "read_trajectories": "aw_lookahead.trajectory",
    "write_trajectories": "aw_lookahead.trajectory",
    # the benchmark format
    "load_turn_samples": "aw_lookahead.agentworldbench",
    "read_agentworldbench": "aw_lookahead.agentworldbench",
    "write_agentworldbench": "aw_lookahead.agentworldbench",
    # world models: the protocol, the base class to subclass, the backends
    "BaseWorldModel": "aw_lookahead.worldmodel",
    "FunctionWorldModel": "aw_lookahead.worldmodel",
    "OpenAIWorldModel": "aw_lookahead.worldmodel",
    "Prediction": "aw_lookahead.worldmodel",
    "Usage": "aw_lookahead.worldmodel",
    "VLLMOfflineWorldModel": "aw_lookahead.worldmodel",
    "WorldModel": "aw_lookahead.worldmodel",
    # the engine: decisions, outcomes, judges
    "Decision": "aw_lookahead.lookahead",
    "DecisionKind": "aw_lookahead.lookahead",
    "Judge": "aw_lookahead.lookahead",
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
    # errors (the tree is drawn in aw_lookahead.errors)
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
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
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
    from .lookahead import Decision as Decision
    from .lookahead import DecisionKind as DecisionKind
    from .lookahead import Judge as Judge
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
    from .trajectory import Action as Action
    from .trajectory import Domain as Domain
    from .trajectory import Trajectory as Trajectory
    from .trajectory import Turn as Turn
    from .trajectory import TurnSample as TurnSample
    from .trajectory import read_trajectories as read_trajectories
    from .trajectory import write_trajectories as write_trajectories
    from .worldmodel import BaseWorldModel as BaseWorldModel
    from .worldmodel import FunctionWorldModel as FunctionWorldModel
    from .worldmodel import OpenAIWorldModel as OpenAIWorldModel
    from .worldmodel import Prediction as Prediction
    from .worldmodel import Usage as Usage
    from .worldmodel import VLLMOfflineWorldModel as VLLMOfflineWorldModel
    from .worldmodel import WorldModel as WorldModel
