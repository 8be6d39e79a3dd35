"""Serving world models: start and stop local vLLM OpenAI-compatible servers.

Importing this package is light (no vLLM, torch or transformers); the server
runs in a child process with the same interpreter.
"""

from __future__ import annotations

from .local import (
    DEFAULT_HOST,
    LocalServer,
    find_free_port,
    start_embedded_server,
    vllm_server_argv,
    vllm_server_env,
)

__all__ = [
    "DEFAULT_HOST",
    "LocalServer",
    "find_free_port",
    "start_embedded_server",
    "vllm_server_argv",
    "vllm_server_env",
]
