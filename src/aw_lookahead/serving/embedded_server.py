"""The embedded model's server: its runtimes, their options and a one-call start.

The embedded model runs on llama.cpp's ``llama-server`` by default: the base
with the shipped adapter merged in, exported once to GGUF Q8_0
(:func:`~aw_lookahead.embedded.export_embedded_gguf`). Measured against vLLM's
CPU build in one run (``bench/runtime_compare.py``, docs/serving.md): the agent
loop's next check 1.03 s against 1.25 s, 484 MiB against 1,295 MiB, ready in
0.5 s against 12.6 s, and it runs where vLLM's CPU build does not (macOS,
ARM). vLLM stays available (``runtime="vllm"``, ``serve --local --runtime
vllm``); it wins only the first, cold check of a session (3.3 s against 4.1 s).

vLLM's options are sized for SmolLM2-135M with a 4,096-token context on a CPU:
the KV cache holds what such a model needs (not the CPU build's 4 GiB
default), and the engine core and its model worker run in a thread of the API
server's process (``serving/_inproc_engine.py``) instead of two more processes,
so a server fits a laptop next to other work.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, Literal, get_args

from aw_lookahead.errors import ConfigError

from ._argv import kv_cache_bytes
from ._inproc_engine import ENABLE_ENV as _INPROC_ENGINE_ENV
from ._malloc_trim import PERIOD_ENV as _TRIM_PERIOD_ENV
from ._process import ServerProcess
from .llama_cpp import LlamaServer
from .local import LocalServer
from .startup import ready_timeout

__all__ = [
    "EMBEDDED_KV_TOKENS",
    "EMBEDDED_RUNTIME",
    "EMBEDDED_SERVER_ENV",
    "EmbeddedRuntime",
    "embedded_kv_cache_bytes",
    "embedded_server_options",
    "start_embedded_server",
]

EmbeddedRuntime = Literal["llama.cpp", "vllm"]

EMBEDDED_RUNTIME: Final[EmbeddedRuntime] = "llama.cpp"
"""The runtime ``start_embedded_server()``, ``serve --local`` and ``make demo`` use."""

EMBEDDED_KV_TOKENS = 4096 + 1024
"""KV-cache tokens the embedded server reserves: one full 4,096-token context plus 1,024
tokens for the ``n`` sampled completions of a check (~113 MiB for SmolLM2-135M; the
prefix cache stores a shared history once); vLLM queues what does not fit instead of
failing. Two full contexts (~180 MiB) measured 30-70 MiB more resident memory for the
whole server and no faster check."""

EMBEDDED_SERVER_ENV = {
    "MALLOC_ARENA_MAX": "2",
    "OMP_WAIT_POLICY": "PASSIVE",
    _TRIM_PERIOD_ENV: "10",
    _INPROC_ENGINE_ENV: "1",
}
"""The embedded server's environment: glibc malloc and OpenMP settings, a heap trim every
10 s, and vLLM's engine core inside the API server's process (see
:func:`embedded_server_options`)."""

_SMOLLM2_135M_KV_BYTES_PER_TOKEN = 2 * 30 * 3 * 64 * 2  # layers, kv heads, head dim, bf16


def embedded_kv_cache_bytes(model: str | os.PathLike[str] | None = None) -> int:
    """The embedded server's KV-cache size: from ``model``'s config when the folder exists
    (it may not yet when a command is only planned), else SmolLM2-135M's known shape."""
    if model is not None and os.path.isfile(os.path.join(model, "config.json")):
        return kv_cache_bytes(model, EMBEDDED_KV_TOKENS)
    return _SMOLLM2_135M_KV_BYTES_PER_TOKEN * EMBEDDED_KV_TOKENS


def embedded_server_options(model: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The :class:`LocalServer` options of the embedded model (``serve --local`` uses the same):
    a 4,096-token context, a KV cache sized for it rather than the CPU build's 4 GiB default,
    the model worker inside the engine process, at most 16 sequences at once, and
    :data:`EMBEDDED_SERVER_ENV`: two malloc arenas, OpenMP threads that sleep instead of
    spinning while they wait (spinning threads compete with the engine's own thread), a
    ``malloc_trim`` every 10 s that returns the heap holes model loading leaves
    (``serving/_malloc_trim.py``), and vLLM's engine core in a thread of the API server
    (``serving/_inproc_engine.py``), so torch, transformers and vLLM are imported once;
    both are vLLM plugins of this package.

    Measured with ``bench/server_memory.py`` on the 2-core machine, K=4 requests on
    1,500-token prompts (docs/serving.md has each run): proportional set size of the
    whole server 5,780 MiB with vLLM's CPU defaults; 1,668 MiB idle with the engine in its
    own process; 1,227 MiB idle (1,427 MiB right after requests) in one process, with the
    same CPU per request. Spinning threads cost 14.0 s instead of 4.1 s per request at
    load ~3. Fixed 128 KiB malloc trim and mmap thresholds would return ~130 MiB of heap
    holes but cost ~1 s per request in page faults, so they are not set."""
    return {
        "max_model_len": 4096,
        "kv_cache_memory_bytes": embedded_kv_cache_bytes(model),
        "single_process_worker": True,
        "max_num_seqs": 16,
        "env": dict(EMBEDDED_SERVER_ENV),
    }


def start_embedded_server(
    *,
    runtime: EmbeddedRuntime = EMBEDDED_RUNTIME,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float | None = None,
    base_only: bool = False,
    progress: Callable[[str], None] | None = None,
    **kwargs: Any,
) -> ServerProcess:
    """Prepare the embedded model (merging, and for llama.cpp exporting, it once), start a
    server, wait until it is ready.

    The model is the base with the shipped adapter merged in, or with
    ``base_only=True`` the raw base (on llama.cpp the GGUF file the weights
    package ships). ``runtime`` is ``"llama.cpp"`` (:class:`LlamaServer` on the
    merged model exported to GGUF Q8_0) or ``"vllm"`` (:class:`LocalServer` on
    the merged bf16 folder with :func:`embedded_server_options`); ``kwargs``
    go to that class. The served name is
    :data:`~aw_lookahead.embedded.EMBEDDED_MODEL_NAME` either way, and
    :attr:`~ServerProcess.server_kind` / :meth:`~ServerProcess.client_env`
    tell a client which server it talks to. ``timeout`` defaults to
    ``$AW_LOOKAHEAD_READY_TIMEOUT``, else 600 s; ``progress`` gets a line
    every 15 s while the server starts. The returned server is ready; the
    caller must :meth:`~ServerProcess.stop` it (or use ``with``). If it does
    not become ready it is stopped before the error propagates.
    """
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME, prepare_embedded_model

    server: ServerProcess
    if runtime == "llama.cpp":
        from aw_lookahead.embedded import embedded_gguf_path, export_embedded_gguf

        gguf = embedded_gguf_path() if base_only else export_embedded_gguf(cache_dir=cache_dir)
        server = LlamaServer(gguf, **{"served_name": EMBEDDED_MODEL_NAME, **kwargs})
    elif runtime == "vllm":
        folder = prepare_embedded_model(cache_dir, base_only=base_only)
        options = {**embedded_server_options(folder), "served_name": EMBEDDED_MODEL_NAME}
        server = LocalServer(folder, **{**options, **kwargs})
    else:
        raise ConfigError(
            f"runtime must be one of {', '.join(get_args(EmbeddedRuntime))}, got {runtime!r}"
        )
    server.start()
    try:
        server.wait_ready(ready_timeout(600.0) if timeout is None else timeout, progress=progress)
    except BaseException:
        server.stop()
        raise
    return server
