"""``aw-lookahead serve``: run vLLM's OpenAI-compatible server with a model's preset flags,
or llama.cpp's ``llama-server`` for a GGUF file (``--gguf``; ``--local``'s default).

The command is built by :func:`aw_lookahead.serving.presets.plan_serve`
(``--gguf``: :func:`aw_lookahead.serving.llama_cpp.plan_gguf`);
``--dry-run`` prints it (``--json``: with the environment and the client
variables) and starts nothing. Otherwise the server runs as a child process
group: ``serve`` waits on ``/health`` with a deadline (``--ready-timeout``),
prints the endpoint and the ``AW_LOOKAHEAD_*`` variables the client reads,
then stays in the foreground. SIGINT / SIGTERM / SIGHUP are forwarded: the
child gets SIGINT, then SIGTERM, then SIGKILL, and ``serve`` exits 0 once
the whole group is gone. If the child dies on its own, ``serve`` exits 1 with
the log tail.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import time
from types import FrameType
from typing import Any

from aw_lookahead.errors import ServerStartError

_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _StopRequested(Exception):
    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


def register(subparsers: Any) -> None:
    from aw_lookahead.serving.presets import DEFAULT_PORT, PRESETS

    p = subparsers.add_parser(
        "serve",
        help="run a world model's server: llama.cpp (--gguf, --local) or vLLM",
        description="Run vLLM's OpenAI-compatible server with the flags a model needs, or "
        "llama.cpp's llama-server for a GGUF file (--gguf) and the embedded model (--local). "
        f"Presets: {', '.join(sorted(PRESETS))}. Anything after `--` goes to the server "
        "verbatim.",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument("--preset", help="a preset name (default: from --model, else 'default')")
    which.add_argument(
        "--local",
        action="store_true",
        help="serve the embedded SmolLM2 with our shipped adapter merged in, on llama.cpp "
        "(merges it and exports it to GGUF once), or on vLLM's CPU build (--runtime vllm)",
    )
    which.add_argument(
        "--gguf",
        metavar="FILE",
        help="serve this GGUF file with llama.cpp's llama-server (built into .venv by "
        "make venv) instead of vLLM; or a registry base by name, fetched once with pip: "
        "qwen2.5-coder-0.5b-instruct, qwen2.5-coder-1.5b-instruct, gemma-3-270m",
    )
    p.add_argument(
        "--base-only",
        action="store_true",
        help="with --local: serve the raw SmolLM2, without the shipped adapter",
    )
    p.add_argument(
        "--runtime",
        choices=("vllm", "llama.cpp"),
        help="with --local: llama.cpp's llama-server on the model exported to GGUF Q8_0 once "
        "(the default; --base-only: the shipped Q4_1 GGUF) or vLLM's CPU build on the merged "
        "bf16 folder",
    )
    p.add_argument("--model", help="Hugging Face id or model folder (default: the preset's)")
    p.add_argument("--served-model-name", help="the model name clients send")
    p.add_argument("--host", default="127.0.0.1", help="bind address (0.0.0.0 for a cluster)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    p.add_argument("--gpus", type=int, help="GPUs per node = --tensor-parallel-size")
    p.add_argument(
        "--nodes", type=int, default=1, help="nodes of a Ray cluster (pipeline parallel)"
    )
    p.add_argument(
        "--max-model-len",
        "--ctx-size",
        type=int,
        help="context length (tokens); with --gguf llama-server's --ctx-size (default 4096)",
    )
    p.add_argument("--threads", type=int, help="with --gguf: CPU threads (default: all)")
    p.add_argument(
        "--parallel",
        type=int,
        help="with --gguf: requests (or samples of one request) served at once (default 4)",
    )
    p.add_argument("--gpu-memory-utilization", type=float)
    p.add_argument(
        "--prefix-caching",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="pass --enable-prefix-caching / --no-enable-prefix-caching (default: the preset's)",
    )
    p.add_argument(
        "--thinking",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="server default for the chat template's enable_thinking (default: the model's)",
    )
    p.add_argument(
        "--lora",
        action="append",
        metavar="NAME=PATH",
        help="serve a LoRA adapter from our trainer (repeatable)",
    )
    p.add_argument("--max-lora-rank", type=int, default=16)
    p.add_argument(
        "--api-key",
        default=None,
        help="require this key from clients (default: $VLLM_API_KEY). Prefer the variable: "
        "a key on the command line is visible to other users in `ps`; the server gets it "
        "through its environment either way (llama.cpp: LLAMA_API_KEY)",
    )
    p.add_argument(
        "--allow-unauthenticated",
        action="store_true",
        help="allow a non-loopback --host without an API key",
    )
    p.add_argument(
        "--ready-timeout",
        type=float,
        help="seconds to wait for /health (default: $AW_LOOKAHEAD_READY_TIMEOUT, else 600 on "
        "the CPU, 1800 on GPUs)",
    )
    p.add_argument("--log-file", help="server log (default: a temporary file)")
    p.add_argument("--dry-run", action="store_true", help="print the command; start nothing")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("vllm_args", nargs=argparse.REMAINDER, help="-- then extra vLLM flags")
    p.set_defaults(func=run)


_VLLM_ONLY = {
    "preset": "--preset",
    "model": "--model",
    "base_only": "--base-only",
    "gpus": "--gpus",
    "gpu_memory_utilization": "--gpu-memory-utilization",
    "prefix_caching": "--prefix-caching",
    "lora": "--lora",
}


def _extra(args: argparse.Namespace) -> list[str]:
    extra = list(args.vllm_args or [])
    return extra[1:] if extra and extra[0] == "--" else extra


def _plan(args: argparse.Namespace) -> Any:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.serving import EMBEDDED_RUNTIME

    if args.runtime is not None and not args.local:
        raise ConfigError("--runtime applies to --local; serve another GGUF file with --gguf FILE")
    args.runtime = args.runtime or (EMBEDDED_RUNTIME if args.local else None)
    if args.gguf is not None or args.runtime == "llama.cpp":
        return _plan_gguf(args)
    for name, flag in (("threads", "--threads"), ("parallel", "--parallel")):
        if getattr(args, name) is not None:
            raise ConfigError(
                f"{flag} applies to llama.cpp only; use it with --gguf FILE or "
                "--local (without --runtime vllm)"
            )
    from aw_lookahead.serving.presets import plan_serve

    return plan_serve(
        "local" if args.local else args.preset,
        model=args.model,
        served_model_name=args.served_model_name,
        host=args.host,
        port=args.port,
        gpus=args.gpus,
        nodes=args.nodes,
        max_model_len=args.max_model_len,
        gpu_memory_utilization=args.gpu_memory_utilization,
        prefix_caching=args.prefix_caching,
        loras=args.lora,
        max_lora_rank=args.max_lora_rank,
        api_key=args.api_key,
        thinking=args.thinking,
        extra_args=_extra(args),
        base_only=args.base_only,
    )


def _plan_gguf(args: argparse.Namespace) -> Any:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.serving.llama_cpp import plan_gguf

    local = args.gguf is None
    vllm_only = {k: v for k, v in _VLLM_ONLY.items() if not (local and k == "base_only")}
    given = [flag for name, flag in vllm_only.items() if getattr(args, name) not in (None, False)]
    if args.nodes != 1:
        given.append("--nodes")
    if given:
        how = "add --runtime vllm" if local else "or serve with vLLM"
        raise ConfigError(
            f"{', '.join(given)} apply to vLLM only; llama.cpp serves the GGUF file as it is "
            f"(drop them, {how})"
        )
    gguf, name = args.gguf, args.served_model_name
    if _registry_name(args) is not None:
        from aw_lookahead.embedded.bases import registry_base_path

        gguf, name = registry_base_path(args.gguf), name or args.gguf
    if local:
        from aw_lookahead.embedded import (
            EMBEDDED_MODEL_NAME,
            embedded_gguf_file,
            embedded_gguf_path,
        )

        gguf = embedded_gguf_path() if args.base_only else embedded_gguf_file()
        name = name or EMBEDDED_MODEL_NAME
    return plan_gguf(
        gguf,
        served_model_name=name,
        host=args.host,
        port=args.port,
        ctx_size=args.max_model_len,
        threads=args.threads,
        parallel=args.parallel,
        thinking=args.thinking,
        api_key=args.api_key,
        extra_args=_extra(args),
    )


def _registry_name(args: argparse.Namespace) -> str | None:
    """``--gguf``'s value when it names a registry base rather than a file."""
    from aw_lookahead.embedded.bases import REGISTRY_BASES

    gguf = args.gguf
    return gguf if gguf in REGISTRY_BASES and not os.path.exists(gguf) else None


def _describe(plan: Any) -> dict[str, Any]:
    from aw_lookahead.serving.llama_cpp import GgufPlan

    gguf = isinstance(plan, GgufPlan)
    return {
        "runtime": "llama.cpp" if gguf else "vllm",
        "preset": None if gguf else plan.preset.name,
        "model": plan.model,
        "served_model_name": plan.served_name,
        "argv": plan.argv,
        "command": shlex.join(plan.argv),
        "server_env": _hide_key(plan.server_env()),
        "client_env": _hide_key(plan.client_env()),
        "base_url": plan.base_url,
        "gpu_memory": "no GPU (CPU build)" if gguf else plan.preset.gpu_memory,
        "model_ready": plan.model_ready,
    }


def _print_ready(plan: Any, server: Any, as_json: bool) -> None:
    if as_json:
        info = _describe(plan) | {"pid": server.pid, "log": str(server.log_path)}
        print(json.dumps(info), flush=True)
        return
    print(f"serving {plan.served_name!r} at {plan.base_url}  (pid {server.pid})")
    print(f"log: {server.log_path}")
    print("client environment:")
    for key, value in _hide_key(plan.client_env()).items():
        print(f"  export {key}={shlex.quote(value)}")
    print("stop with Ctrl-C (or SIGTERM)", flush=True)


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _StopRequested(signum)


def _api_key(args: argparse.Namespace) -> str | None:
    """The key from ``--api-key`` or ``$VLLM_API_KEY``; empty, short ones and open binds refused."""
    from aw_lookahead._net import check_server_token, is_loopback
    from aw_lookahead.errors import ConfigError

    key: str | None
    if args.api_key is not None:
        origin, key = "--api-key", str(args.api_key)
        if not args.dry_run:
            print(
                "aw-lookahead serve: warning: --api-key is visible to other users in `ps`; "
                "prefer the environment variable VLLM_API_KEY",
                file=sys.stderr,
            )
    else:
        origin, key = "VLLM_API_KEY", os.environ.get("VLLM_API_KEY")
    if key is not None:
        check_server_token(key, origin=origin, variable="VLLM_API_KEY")
    if key is None and not is_loopback(args.host) and not args.allow_unauthenticated:
        raise ConfigError(
            f"--host {args.host} makes the server reachable from other machines; set "
            "VLLM_API_KEY (or --api-key) or pass --allow-unauthenticated"
        )
    return key


def _hide_key(env: dict[str, str]) -> dict[str, str]:
    return {k: ("<hidden>" if k.endswith("API_KEY") else v) for k, v in env.items()}


def run(args: argparse.Namespace) -> int:
    args.api_key = _api_key(args)
    plan = _plan(args)
    if args.dry_run:
        if args.json:
            print(json.dumps(_describe(plan), indent=2))
        else:
            env = " ".join(f"{k}={shlex.quote(v)}" for k, v in _hide_key(plan.server_env()).items())
            print(f"{env} {shlex.join(plan.argv)}".strip())
            if not plan.model_ready:
                later = (
                    "; `serve` fetches it first"
                    if _registry_name(args)
                    else ""
                    if args.gguf
                    else "; `serve --local` converts it first"
                )
                print(f"# note: {plan.model} does not exist yet{later}", file=sys.stderr)
        return 0
    from aw_lookahead.serving.llama_cpp import GgufPlan

    llama = isinstance(plan, GgufPlan)
    if _registry_name(args) is not None:
        from aw_lookahead.embedded.bases import fetch_registry_base

        fetch_registry_base(args.gguf, progress=lambda m: print(m, file=sys.stderr, flush=True))
    if args.gguf is not None and not plan.model_ready:
        from aw_lookahead.errors import ConfigError

        raise ConfigError(f"--gguf {args.gguf}: no such file")
    if llama and args.gguf is None and not args.base_only:
        from aw_lookahead.embedded import export_embedded_gguf

        export_embedded_gguf(plan.gguf)
    if not llama and plan.preset.name == "local" and args.model is None:
        from aw_lookahead.embedded import prepare_embedded_model

        folder = prepare_embedded_model(base_only=args.base_only)
        if str(folder) != plan.model:  # pragma: no cover - same default location
            args.model = str(folder)
            plan = _plan(args)
    from aw_lookahead.lookahead.calibration import find_calibration, uncalibrated_note

    shipped = args.local and not args.base_only  # the embedded model's own calibration
    if not shipped and find_calibration(plan.served_name) is None:
        print(f"aw-lookahead serve: note: {uncalibrated_note(plan.served_name)}", file=sys.stderr)
    if args.api_key is None:
        print(
            f"aw-lookahead serve: warning: serving on {args.host} without an API key; anything "
            "that reaches the port can use the model (set VLLM_API_KEY)",
            file=sys.stderr,
        )
    from aw_lookahead.serving import ready_timeout

    cpu = llama or plan.preset.cpu
    timeout = args.ready_timeout or ready_timeout(600.0 if cpu else 1800.0)
    previous = {sig: signal.signal(sig, _raise_stop) for sig in _STOP_SIGNALS}
    server = plan.server(log_path=args.log_file)
    try:
        if not args.json:
            print(f"starting: {shlex.join(plan.argv)}", flush=True)
        server.start()
        server.wait_ready(timeout, progress=None if args.json else _progress_line)
        _print_ready(plan, server, args.json)
        while server.running:
            time.sleep(0.5)
        raise ServerStartError(
            f"the {'llama.cpp' if llama else 'vLLM'} server exited on its own",
            log_path=server.log_path,
            log_tail=server.log_tail(),
        )
    except (_StopRequested, KeyboardInterrupt) as exc:
        name = exc.args[0] if isinstance(exc, _StopRequested) else "SIGINT"
        print(f"received {name}; stopping the server", file=sys.stderr, flush=True)
        for sig in _STOP_SIGNALS:  # a second Ctrl-C must not abort the shutdown
            signal.signal(sig, signal.SIG_IGN)
        code = server.stop()
        print(f"server stopped (exit code {code})", file=sys.stderr, flush=True)
        return 0
    finally:
        for sig in _STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _progress_line(text: str) -> None:
    print(text, flush=True)
