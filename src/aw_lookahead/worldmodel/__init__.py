"""World models: the :class:`WorldModel` protocol and its backends.

* :class:`OpenAIWorldModel` - any OpenAI-compatible server (vLLM, SGLang, llama.cpp).
* :class:`FunctionWorldModel` - a Python function (rule simulators, replays, benchmarks).
* :class:`VLLMOfflineWorldModel` - in-process ``vllm.LLM`` batches (extra ``[vllm]``;
  loaded on first access so importing this package never imports vLLM).

:class:`BaseWorldModel` is the whole contract (the protocol's members plus the
optional ones, with defaults); :func:`~.conform.conform` gives a bare-protocol
object those defaults. The backends are async (``predict``, ``predict_many``, ``aclose``); blocking
code calls :meth:`BaseWorldModel.predict_sync`, :meth:`~BaseWorldModel.predict_many_sync`
and :meth:`~BaseWorldModel.close`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import BaseWorldModel, Prediction, ServedModel, Step, Usage, WorldModel
from .function import FunctionWorldModel
from .openai_api import DEFAULT_BASE_URL, ModelInfo, OpenAIWorldModel

if TYPE_CHECKING:
    from .offline import VLLMOfflineWorldModel

__all__ = [
    "DEFAULT_BASE_URL",
    "BaseWorldModel",
    "FunctionWorldModel",
    "ModelInfo",
    "OpenAIWorldModel",
    "Prediction",
    "ServedModel",
    "Step",
    "Usage",
    "VLLMOfflineWorldModel",
    "WorldModel",
]


def __getattr__(name: str) -> Any:
    # Lazy export: offline.py itself imports vLLM only when an engine is built,
    # but keeping it out of the package import keeps `import aw_lookahead` minimal.
    if name == "VLLMOfflineWorldModel":
        from .offline import VLLMOfflineWorldModel

        return VLLMOfflineWorldModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
