"""Serving world models: start and stop llama.cpp's ``llama-server`` for GGUF files
(:mod:`.llama_cpp`; the embedded model's default runtime) and local vLLM
OpenAI-compatible servers.

Importing this package is light (no vLLM, torch or transformers); the server
runs in a child process with the same interpreter.
"""

from __future__ import annotations

from ._process import ServerProcess
from .embedded_server import (
    EMBEDDED_KV_TOKENS,
    EMBEDDED_RUNTIME,
    embedded_server_options,
    start_embedded_server,
)
from .llama_cpp import LlamaServer, find_llama_server
from .local import (
    CPU_FLAGS,
    DEFAULT_HOST,
    LocalServer,
    VllmFlags,
    find_free_port,
    kv_cache_bytes,
    vllm_server_argv,
    vllm_server_env,
)
from .startup import READY_TIMEOUT_ENV, ready_timeout, startup_cause

__all__ = [
    "CPU_FLAGS",
    "DEFAULT_HOST",
    "EMBEDDED_KV_TOKENS",
    "EMBEDDED_RUNTIME",
    "READY_TIMEOUT_ENV",
    "LlamaServer",
    "LocalServer",
    "ServerProcess",
    "VllmFlags",
    "embedded_server_options",
    "find_free_port",
    "find_llama_server",
    "kv_cache_bytes",
    "ready_timeout",
    "start_embedded_server",
    "startup_cause",
    "vllm_server_argv",
    "vllm_server_env",
]
