"""LangGraph / LangChain adapters (extra ``langgraph``): lookahead inside an agent loop.

* :class:`LookaheadMiddleware` - for ``langchain.agents.create_agent``: gate
  mode vetoes predicted failures before they run, select mode keeps the best
  of K sampled responses.
* :class:`LookaheadNode` and :func:`lookahead_condition` - for hand-built
  ``StateGraph``\\ s (and ``LookaheadNode.hook`` as the ``post_model_hook`` of
  the deprecated ``create_react_agent``).
* :class:`TrajectoryRecorder` - every real (action, observation) of a run to
  crash-safe JSONL in our trajectory schema.
* :class:`ShadowMiddleware` - execute for real and simulate, log both with a
  divergence score; never changes what executes.
* :func:`asked_by_lookahead` - ``when=`` predicate for ``HumanInTheLoopMiddleware``
  next to ``LookaheadMiddleware(on_veto="interrupt")``.
* :func:`messages_to_trajectory` and :class:`DomainMap` - messages -> trajectory.

Importing this package without the extra raises an ImportError whose message
is the ``pip install 'aw-lookahead[langgraph]'`` line.
"""

from __future__ import annotations

from aw_lookahead._extras import require

require("langgraph", "langgraph")
require("langgraph", "langchain.agents")

from ._gate import asked_by_lookahead  # noqa: E402
from .convert import (  # noqa: E402
    VETO_ID_PREFIX,
    DomainMap,
    message_text,
    messages_to_trajectory,
    tool_definitions,
)
from .middleware import LookaheadMiddleware, LookaheadState  # noqa: E402
from .node import LookaheadNode, lookahead_condition  # noqa: E402
from .recorder import TrajectoryRecorder, read_recording  # noqa: E402
from .shadow import ShadowMiddleware, ShadowPair, divergence, read_shadow_pairs  # noqa: E402

__all__ = [
    "VETO_ID_PREFIX",
    "DomainMap",
    "LookaheadMiddleware",
    "LookaheadNode",
    "LookaheadState",
    "ShadowMiddleware",
    "ShadowPair",
    "TrajectoryRecorder",
    "asked_by_lookahead",
    "divergence",
    "lookahead_condition",
    "message_text",
    "messages_to_trajectory",
    "read_recording",
    "read_shadow_pairs",
    "tool_definitions",
]
