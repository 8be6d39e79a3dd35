"""The command line and environment of a vLLM OpenAI-compatible server.

Pure builders with no process handling, kept apart from the
:class:`~aw_lookahead.serving.local.LocalServer` lifecycle so presets and the
``serve`` CLI can plan a server without owning one. Re-exported by
:mod:`aw_lookahead.serving.local`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, TypedDict, Unpack

from aw_lookahead.errors import ConfigError

__all__ = [
    "CPU_FLAGS",
    "DEFAULT_HOST",
    "VLLM_FLAGS",
    "VllmFlags",
    "client_env",
    "find_free_port",
    "kv_cache_bytes",
    "vllm_server_argv",
    "vllm_server_env",
]

DEFAULT_HOST = "127.0.0.1"
_ENTRY_MODULE = "vllm.entrypoints.openai.api_server"


class VllmFlags(TypedDict, total=False):
    """The server flags :func:`vllm_server_argv` and ``LocalServer`` both take.

    One definition, so the launcher and the process owner cannot drift; the
    defaults are :data:`VLLM_FLAGS` (vLLM's own: omit the flag) and, for
    ``LocalServer``, :data:`CPU_FLAGS`.
    """

    max_model_len: int | None
    gpu_memory_utilization: float | None
    enforce_eager: bool
    enable_prompt_tokens_details: bool
    enable_lora: bool
    max_lora_rank: int
    max_loras: int
    lora_modules: Mapping[str, str | os.PathLike[str]] | None
    kv_cache_memory_bytes: int | None
    single_process_worker: bool
    max_num_seqs: int | None
    chunked_prefill: bool | None


VLLM_FLAGS: Final[VllmFlags] = {
    "max_model_len": None,
    "gpu_memory_utilization": None,
    "enforce_eager": False,
    "enable_prompt_tokens_details": False,
    "enable_lora": False,
    "max_lora_rank": 16,
    "max_loras": 2,
    "lora_modules": None,
    "kv_cache_memory_bytes": None,
    "single_process_worker": False,
    "max_num_seqs": None,
    "chunked_prefill": None,
}
"""The defaults of :func:`vllm_server_argv`: each flag left to vLLM."""

CPU_FLAGS: Final[VllmFlags] = {
    **VLLM_FLAGS,
    "max_model_len": 4096,
    "gpu_memory_utilization": 0.2,
    "enforce_eager": True,
    "enable_prompt_tokens_details": True,
    "chunked_prefill": False,
}
"""The defaults of ``LocalServer``, where they differ from :data:`VLLM_FLAGS`: what the CPU
build needs (a 4,096-token context, a small memory share, no graph capture, each prompt
prefilled in one step) plus cached-token counts in replies.

Whole prefills because the CPU build's torch generator cannot rewind: vLLM rewinds a seeded
request's generator after each partial prefill step, so a seeded prompt longer than the step's
2,048-token budget killed the engine ("CPU Generator does not use offset", then every request
failed with EngineDeadError)."""


def client_env(base_url: str, model: str, kind: str, api_key: str | None) -> dict[str, str]:
    """The variables :class:`~aw_lookahead.worldmodel.OpenAIWorldModel` reads to reach a server:
    its URL, the model name, the kind of server (``vllm``, ``llama.cpp``; it says what the
    server offers beyond the OpenAI API) and, when the server checks one, the key."""
    env = {
        "AW_LOOKAHEAD_BASE_URL": base_url,
        "AW_LOOKAHEAD_MODEL": model,
        "AW_LOOKAHEAD_SERVER": kind,
    }
    if api_key:
        env["AW_LOOKAHEAD_API_KEY"] = api_key
    return env


def find_free_port(host: str = DEFAULT_HOST) -> int:
    """Return a TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def kv_cache_bytes(model: str | os.PathLike[str], tokens: int, *, dtype_bytes: int = 2) -> int:
    """KV-cache bytes that hold ``tokens`` tokens of the model in folder ``model``.

    Per token a decoder layer keeps a key and a value of
    ``num_key_value_heads * head_dim`` numbers, so the size is
    ``2 * layers * kv_heads * head_dim * dtype_bytes * tokens`` (SmolLM2-135M:
    23,040 bytes a token). Raises :class:`~aw_lookahead.errors.ConfigError`
    when ``config.json`` lacks the fields.
    """
    path = Path(model) / "config.json"
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
        layers = int(cfg["num_hidden_layers"])
        heads = int(cfg["num_attention_heads"])
        kv_heads = int(cfg.get("num_key_value_heads") or heads)
        head_dim = int(cfg.get("head_dim") or int(cfg["hidden_size"]) // heads)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(
            f"{path}: cannot size the KV cache from it ({exc}); pass the size explicitly"
        ) from exc
    return 2 * layers * kv_heads * head_dim * dtype_bytes * tokens


def vllm_server_argv(
    model: str | os.PathLike[str],
    *,
    port: int,
    served_name: str | None = None,
    host: str = DEFAULT_HOST,
    python: str | None = None,
    api_key: str | None = None,
    extra_args: Sequence[str] = (),
    **flags: Unpack[VllmFlags],
) -> list[str]:
    """Build the argv of a vLLM OpenAI-compatible server; options left as None are omitted.

    ``flags`` are :class:`VllmFlags` over :data:`VLLM_FLAGS`.

    ``kv_cache_memory_bytes`` reserves exactly that much for the KV cache
    (instead of a share of the machine's memory: on the CPU build that share
    is 4 GiB by default, far more than a small model needs).
    ``single_process_worker`` runs the model worker inside the engine process
    (``--distributed-executor-backend uni``), one process fewer for a
    one-device server.

    ``chunked_prefill=False`` prefills each prompt in one step (with a step budget of
    ``max_model_len`` tokens, which a whole prompt needs); ``None`` leaves vLLM's default.

    ``lora_modules`` (``{name: adapter folder}``) implies ``enable_lora``.
    ``extra_args`` are appended verbatim, so they can override earlier flags.
    ``api_key`` puts the key on the command line, where ``ps`` shows it;
    :class:`~aw_lookahead.serving.LocalServer` passes ``VLLM_API_KEY`` instead.
    """
    if not 0 < port < 65536:
        raise ConfigError(f"port must be in 1..65535, got {port}")
    f: VllmFlags = {**VLLM_FLAGS, **flags}
    max_model_len = f["max_model_len"]
    gpu_memory_utilization = f["gpu_memory_utilization"]
    lora_modules = f["lora_modules"]
    kv_cache_memory_bytes = f["kv_cache_memory_bytes"]
    max_num_seqs = f["max_num_seqs"]
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
    if f["enforce_eager"]:
        argv.append("--enforce-eager")
    if f["enable_prompt_tokens_details"]:
        argv.append("--enable-prompt-tokens-details")
    if f["enable_lora"] or lora_modules:
        argv += ["--enable-lora", "--max-lora-rank", str(f["max_lora_rank"])]
        argv += ["--max-loras", str(f["max_loras"])]
    if lora_modules:
        argv.append("--lora-modules")
        argv += [f"{name}={os.fspath(path)}" for name, path in lora_modules.items()]
    if api_key:
        argv += ["--api-key", api_key]
    if kv_cache_memory_bytes is not None:
        if kv_cache_memory_bytes < 1:
            raise ConfigError(f"kv_cache_memory_bytes must be >= 1, got {kv_cache_memory_bytes}")
        argv += ["--kv-cache-memory-bytes", str(kv_cache_memory_bytes)]
    if f["single_process_worker"]:
        argv += ["--distributed-executor-backend", "uni"]
    if max_num_seqs is not None:
        argv += ["--max-num-seqs", str(max_num_seqs)]
    if f["chunked_prefill"] is not None:
        argv.append(
            "--enable-chunked-prefill" if f["chunked_prefill"] else "--no-enable-chunked-prefill"
        )
        if not f["chunked_prefill"] and max_model_len is not None:
            argv += ["--max-num-batched-tokens", str(max_model_len)]
    argv += list(extra_args)
    return argv


def vllm_server_env(
    *,
    enable_lora: bool = False,
    single_process_worker: bool = False,
    offline: bool = True,
    extra: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment for the server: ``base`` (default ``os.environ``) plus our settings.

    ``offline`` sets ``HF_HUB_OFFLINE=1`` so a local folder never triggers a
    download; ``enable_lora`` allows runtime adapter loading
    (``POST /v1/load_lora_adapter``); ``single_process_worker`` keeps the
    model worker inside the engine process (with ``--distributed-executor-backend
    uni`` from :func:`vllm_server_argv`; the CPU build needs both).
    """
    env = dict(os.environ if base is None else base)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    if enable_lora:
        env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
    if single_process_worker:
        env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    env.update(extra or {})
    return env
