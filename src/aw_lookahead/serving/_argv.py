"""The command line and environment of a vLLM OpenAI-compatible server.

Pure builders with no process handling, kept apart from the
:class:`~aw_lookahead.serving.local.LocalServer` lifecycle so presets and the
``serve`` CLI can plan a server without owning one. Re-exported by
:mod:`aw_lookahead.serving.local`.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence

from aw_lookahead.errors import ConfigError

__all__ = ["DEFAULT_HOST", "find_free_port", "vllm_server_argv", "vllm_server_env"]

DEFAULT_HOST = "127.0.0.1"
_ENTRY_MODULE = "vllm.entrypoints.openai.api_server"


def find_free_port(host: str = DEFAULT_HOST) -> int:
    """Return a TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def vllm_server_argv(
    model: str | os.PathLike[str],
    *,
    port: int,
    served_name: str | None = None,
    host: str = DEFAULT_HOST,
    python: str | None = None,
    max_model_len: int | None = None,
    gpu_memory_utilization: float | None = None,
    enforce_eager: bool = False,
    enable_prompt_tokens_details: bool = False,
    enable_lora: bool = False,
    max_lora_rank: int = 16,
    max_loras: int = 2,
    lora_modules: Mapping[str, str | os.PathLike[str]] | None = None,
    api_key: str | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Build the argv of a vLLM OpenAI-compatible server; options left as None are omitted.

    ``lora_modules`` (``{name: adapter folder}``) implies ``enable_lora``.
    ``extra_args`` are appended verbatim, so they can override earlier flags.
    ``api_key`` puts the key on the command line, where ``ps`` shows it;
    :class:`~aw_lookahead.serving.LocalServer` passes ``VLLM_API_KEY`` instead.
    """
    if not 0 < port < 65536:
        raise ConfigError(f"port must be in 1..65535, got {port}")
    if gpu_memory_utilization is not None and not 0 < gpu_memory_utilization <= 1:
        raise ConfigError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}")
    argv = [python or sys.executable, "-m", _ENTRY_MODULE, "--model", os.fspath(model)]
    if served_name:
        argv += ["--served-model-name", served_name]
    argv += ["--host", host, "--port", str(port)]
    if max_model_len is not None:
        argv += ["--max-model-len", str(max_model_len)]
    if gpu_memory_utilization is not None:
        argv += ["--gpu-memory-utilization", f"{gpu_memory_utilization:g}"]
    if enforce_eager:
        argv.append("--enforce-eager")
    if enable_prompt_tokens_details:
        argv.append("--enable-prompt-tokens-details")
    if enable_lora or lora_modules:
        argv += ["--enable-lora", "--max-lora-rank", str(max_lora_rank)]
        argv += ["--max-loras", str(max_loras)]
    if lora_modules:
        argv.append("--lora-modules")
        argv += [f"{name}={os.fspath(path)}" for name, path in lora_modules.items()]
    if api_key:
        argv += ["--api-key", api_key]
    argv += list(extra_args)
    return argv


def vllm_server_env(
    *,
    enable_lora: bool = False,
    offline: bool = True,
    extra: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for the server: ``base`` (default ``os.environ``) plus our settings.

    ``offline`` sets ``HF_HUB_OFFLINE=1`` so a local folder never triggers a
    download; ``enable_lora`` allows runtime adapter loading
    (``POST /v1/load_lora_adapter``).
    """
    env = dict(os.environ if base is None else base)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    if enable_lora:
        env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
    env.update(extra or {})
    return env
