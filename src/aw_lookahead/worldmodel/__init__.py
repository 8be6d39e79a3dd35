"""World models: the :class:`WorldModel` protocol and its backends.

* :class:`OpenAIWorldModel` - any OpenAI-compatible server (vLLM, SGLang, llama.cpp).
* :class:`FunctionWorldModel` - a Python function (rule simulators, replays, benchmarks).
* :class:`SyncWorldModel` - blocking wrapper for scripts.
"""

from __future__ import annotations

from .base import BaseWorldModel, Prediction, Usage, WorldModel
from .function import FunctionWorldModel
from .openai_api import DEFAULT_BASE_URL, ModelInfo, OpenAIWorldModel
from .sync import SyncWorldModel

__all__ = [
    "DEFAULT_BASE_URL",
    "BaseWorldModel",
    "FunctionWorldModel",
    "ModelInfo",
    "OpenAIWorldModel",
    "Prediction",
    "SyncWorldModel",
    "Usage",
    "WorldModel",
]
