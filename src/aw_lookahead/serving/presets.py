"""Serving presets: the vLLM flags each known world model needs, and the plan that uses them.

A :class:`Preset` records what a model needs to be served well (parser flags,
context length, memory headroom, whether prefix caching is passed explicitly,
the GPUs it needs). :func:`plan_serve` turns a preset plus the caller's choices
(GPU count, nodes, LoRA adapters, key, port) into a :class:`ServePlan` whose
:meth:`ServePlan.server` is a :class:`~aw_lookahead.serving.local.LocalServer`
and whose :attr:`ServePlan.argv` is exactly the command that server runs.
``aw-lookahead serve --dry-run`` prints that argv, and the recipes in
``integrations/vllm/`` are checked against it by the tests.

Guarantees:

* ``--enable-prefix-caching`` (or ``--no-enable-prefix-caching``) is always
  passed explicitly on GPU presets: the reference model is a Gated-DeltaNet
  hybrid whose prefix cache is opt-in and experimental in vLLM, so a run must
  say what it asked for and measure the hit rate (``aw-lookahead stats``).
* ``--tensor-parallel-size`` is the GPU count per node; ``nodes > 1`` adds
  ``--pipeline-parallel-size NODES --distributed-executor-backend ray``
  (vLLM's own multi-node serving; start the Ray cluster first).
* Memory figures on GPU presets are estimates from the parameter count and
  the vLLM recipes, **not measured here** (no GPU was available).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aw_lookahead.errors import ConfigError

from ._argv import client_env
from .local import DEFAULT_HOST, LocalServer, vllm_server_argv

__all__ = [
    "DEFAULT_PORT",
    "PRESETS",
    "Preset",
    "ServePlan",
    "find_preset",
    "plan_serve",
]

DEFAULT_PORT = 8000
"""The port of ``aw-lookahead serve`` (the client's default base URL uses it too)."""

_QWEN_FLAGS = ("--reasoning-parser", "qwen3", "--language-model-only", "--trust-remote-code")


@dataclass(frozen=True)
class Preset:
    """How to serve one model (or a class of models) with vLLM.

    ``model`` is the Hugging Face id served by default (``None``: the caller
    must pass one; ``"embedded"``: the converted SmolLM2 folder).
    ``model_flags`` are passed verbatim after the common flags.
    ``prefix_caching`` ``True``/``False`` passes the flag explicitly;
    ``None`` leaves vLLM's default. ``gpus`` is the default GPU count per
    node (tensor parallel); ``0`` means a CPU build. ``gpu_memory`` says what
    the model needs, in words, and whether it was measured.
    """

    name: str
    description: str
    model: str | None
    model_flags: tuple[str, ...] = ()
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = 0.90
    prefix_caching: bool | None = True
    gpus: int = 1
    enforce_eager: bool = False
    gpu_memory: str = ""
    aliases: tuple[str, ...] = ()

    @property
    def cpu(self) -> bool:
        """True for the CPU-build preset (no tensor parallel flags)."""
        return self.gpus == 0


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="qwen-agentworld-35b-a3b",
            description="Qwen-AgentWorld-35B-A3B, the reference world model (MoE, 3B active, "
            "Gated-DeltaNet hybrid, 256K context)",
            model="Qwen/Qwen-AgentWorld-35B-A3B",
            model_flags=_QWEN_FLAGS,
            max_model_len=32768,
            gpus=1,
            gpu_memory="BF16 weights ~70 GB: 1x H200 (141 GB) with --max-model-len 32768 "
            "(vLLM recipe: ~84 GB minimum); 2-4x 80 GB GPUs for the full 262144 context "
            "[estimate from the vLLM recipe, not measured]",
            aliases=("agentworld-35b", "qwen-agentworld"),
        ),
        Preset(
            name="qwen-agentworld-397b-a17b",
            description="Qwen-AgentWorld-397B-A17B, the large sibling (MoE, 17B active)",
            model="Qwen/Qwen-AgentWorld-397B-A17B",
            model_flags=_QWEN_FLAGS,
            max_model_len=32768,
            gpus=8,
            gpu_memory="BF16 weights ~800 GB: 8x H200 (1128 GB) on one node, or 2 nodes of "
            "8x 80 GB with --nodes 2 [estimate from the parameter count, not measured]",
            aliases=("agentworld-397b",),
        ),
        Preset(
            name="default",
            description="any chat model from the Hugging Face hub (pass --model)",
            model=None,
            gpus=1,
            gpu_memory="about 2 bytes per parameter for BF16 weights plus KV cache "
            "[rule of thumb, not measured]",
        ),
        Preset(
            name="local",
            description="the embedded SmolLM2-135M-Instruct with our shipped LoRA adapter merged "
            "in, on the CPU build of vLLM (see docs/embedded-model.md for what it gets right)",
            model="embedded",
            max_model_len=4096,
            gpu_memory_utilization=0.2,
            gpus=0,
            enforce_eager=True,
            gpu_memory="no GPU; ~1.3 GB RAM (KV cache sized for the model, engine in the API "
            "server's process), ready in ~10-60 s on 2 cores [measured]",
        ),
    )
}


def find_preset(name_or_model: str | None) -> Preset:
    """The preset named ``name_or_model`` (a name, an alias or a preset's model id).

    ``None`` gives ``default``. A Hugging Face id that no preset knows also
    gives ``default``; an unknown name without a ``/`` is an error listing the
    presets, since it is most likely a typo.
    """
    if name_or_model is None:
        return PRESETS["default"]
    key = name_or_model.strip().lower()
    for preset in PRESETS.values():
        if key == preset.name or key in preset.aliases:
            return preset
        if preset.model is not None and key == preset.model.lower():
            return preset
    if "/" in key or os.path.isdir(name_or_model):
        return PRESETS["default"]
    raise ConfigError(
        f"unknown preset {name_or_model!r}; choose one of {sorted(PRESETS)} "
        "or pass a Hugging Face model id / model folder with --model"
    )


def _parse_loras(loras: Sequence[str] | Mapping[str, str] | None) -> dict[str, str]:
    if loras is None:
        return {}
    if isinstance(loras, Mapping):
        return {str(k): str(v) for k, v in loras.items()}
    out: dict[str, str] = {}
    for item in loras:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise ConfigError(
                f"a LoRA adapter is NAME=PATH (e.g. aw-sft=runs/sft/adapter), got {item!r}"
            )
        if name in out:
            raise ConfigError(f"LoRA adapter name {name!r} is given twice")
        out[name] = path
    return out


@dataclass(frozen=True)
class ServePlan:
    """A fully resolved serving command. ``server()`` builds the process owner."""

    preset: Preset
    model: str
    served_name: str
    host: str
    port: int
    api_key: str | None
    server_kwargs: dict[str, object] = field(repr=False)
    model_ready: bool = True

    @property
    def argv(self) -> list[str]:
        """The exact command (interpreter, ``-m``, module, flags); the API key is not in it."""
        kwargs = {k: v for k, v in self.server_kwargs.items() if k not in ("api_key", "extra_env")}
        return vllm_server_argv(self.model, **kwargs)  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        """The URL clients use; a wildcard bind host is reached through loopback."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}/v1"

    def client_env(self) -> dict[str, str]:
        """The environment variables :class:`~aw_lookahead.worldmodel.OpenAIWorldModel` reads."""
        return client_env(self.base_url, self.served_name, "vllm", self.api_key)

    def server_env(self) -> dict[str, str]:
        """Only the variables the server gets on top of the caller's environment.

        The API key travels as ``VLLM_API_KEY`` (vLLM reads it when
        ``--api-key`` is absent), so it never shows in ``ps``.
        """
        env: dict[str, str] = {}
        if self.preset.cpu or Path(self.model).is_dir():
            env["HF_HUB_OFFLINE"] = "1"
        else:
            env["HF_HUB_OFFLINE"] = os.environ.get("HF_HUB_OFFLINE", "0")
        if self.server_kwargs.get("enable_lora"):
            env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"
        if self.server_kwargs.get("single_process_worker"):
            env["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
        extra = self.server_kwargs.get("extra_env")
        if isinstance(extra, dict):
            env.update({str(k): str(v) for k, v in extra.items()})
        if self.api_key:
            env["VLLM_API_KEY"] = self.api_key
        return env

    def server(self, *, log_path: str | os.PathLike[str] | None = None) -> LocalServer:
        """A :class:`LocalServer` that runs :attr:`argv` (not started)."""
        kwargs = dict(self.server_kwargs)
        kwargs.pop("port")
        kwargs.pop("extra_env", None)
        return LocalServer(
            self.model,
            port=self.port,
            env=self.server_env(),
            log_path=log_path,
            **kwargs,  # type: ignore[arg-type]
        )


def plan_serve(
    preset: Preset | str | None = None,
    *,
    model: str | os.PathLike[str] | None = None,
    served_model_name: str | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    gpus: int | None = None,
    nodes: int = 1,
    max_model_len: int | None = None,
    gpu_memory_utilization: float | None = None,
    prefix_caching: bool | None = None,
    loras: Sequence[str] | Mapping[str, str] | None = None,
    max_lora_rank: int = 16,
    api_key: str | None = None,
    thinking: bool | None = None,
    extra_args: Sequence[str] = (),
    python: str | None = None,
    embedded_dir: str | os.PathLike[str] | None = None,
    base_only: bool = False,
) -> ServePlan:
    """Resolve a preset and the caller's options into a :class:`ServePlan`.

    ``None`` options take the preset's value. ``gpus`` is the GPU count per
    node (tensor parallel size); ``nodes`` adds pipeline parallel over Ray.
    ``thinking=False`` makes non-thinking the server default
    (``--default-chat-template-kwargs``). ``embedded_dir`` is the converted
    SmolLM2 folder for the ``local`` preset (default: where
    :func:`~aw_lookahead.embedded.prepare_embedded_model` puts the merged
    model, or with ``base_only`` the raw base; the plan notes whether it
    exists yet, and nothing is converted here).
    """
    if not isinstance(preset, Preset):
        preset = find_preset(preset if preset is not None else (str(model) if model else None))
    model_ready = True
    if base_only and preset.model != "embedded":
        raise ConfigError("--base-only applies to the embedded model only; use it with --local")
    if preset.model == "embedded":
        from aw_lookahead.embedded import EMBEDDED_MODEL_NAME, embedded_model_dir

        served_model_name = served_model_name or EMBEDDED_MODEL_NAME
    if model is not None:
        model_name = os.fspath(model)
    elif preset.model == "embedded":
        folder = (
            Path(embedded_dir)
            if embedded_dir is not None
            else embedded_model_dir(base_only=base_only)
        )
        model_name = str(folder)
        model_ready = folder.is_dir()
    elif preset.model is not None:
        model_name = preset.model
    else:
        raise ConfigError(
            "the default preset needs a model: pass --model <hf id or folder>, or a preset "
            f"({', '.join(sorted(PRESETS))})"
        )
    if nodes < 1:
        raise ConfigError(f"--nodes must be >= 1, got {nodes}")
    if gpus is not None and gpus < 1:
        raise ConfigError(f"--gpus must be >= 1, got {gpus}")
    if preset.cpu and (gpus is not None or nodes > 1):
        raise ConfigError(f"the {preset.name!r} preset runs on the CPU build; drop --gpus/--nodes")
    if not 0 <= port < 65536:
        raise ConfigError(f"port must be in 0..65535 (0 picks a free one), got {port}")
    if port == 0:
        from .local import find_free_port

        port = find_free_port(host if host not in ("0.0.0.0", "::") else DEFAULT_HOST)
    lora_modules = _parse_loras(loras)
    served = served_model_name or model_name
    flags: list[str] = list(preset.model_flags)
    if not preset.cpu:
        flags += ["--tensor-parallel-size", str(gpus if gpus is not None else preset.gpus)]
        if nodes > 1:
            flags += ["--pipeline-parallel-size", str(nodes)]
            flags += ["--distributed-executor-backend", "ray"]
    caching = preset.prefix_caching if prefix_caching is None else prefix_caching
    if caching is True:
        flags.append("--enable-prefix-caching")
    elif caching is False:
        flags.append("--no-enable-prefix-caching")
    if thinking is not None:
        flags += ["--default-chat-template-kwargs", json.dumps({"enable_thinking": thinking})]
    flags += list(extra_args)
    kwargs: dict[str, object] = {
        "port": port,
        "served_name": served,
        "host": host,
        "python": python,
        "max_model_len": max_model_len if max_model_len is not None else preset.max_model_len,
        "gpu_memory_utilization": (
            gpu_memory_utilization
            if gpu_memory_utilization is not None
            else preset.gpu_memory_utilization
        ),
        "enforce_eager": preset.enforce_eager,
        "chunked_prefill": False if preset.cpu else None,
        "enable_prompt_tokens_details": True,
        "enable_lora": bool(lora_modules),
        "max_lora_rank": max_lora_rank,
        "lora_modules": lora_modules or None,
        "api_key": api_key,
        "extra_args": flags,
    }
    if preset.model == "embedded" and model is None:
        from .embedded_server import embedded_server_options

        options = embedded_server_options(model_name)
        for key in ("kv_cache_memory_bytes", "single_process_worker", "max_num_seqs"):
            kwargs[key] = options[key]
        kwargs["extra_env"] = options["env"]
    plan = ServePlan(
        preset=preset,
        model=model_name,
        served_name=served,
        host=host,
        port=port,
        api_key=api_key,
        server_kwargs=kwargs,
        model_ready=model_ready,
    )
    plan.argv  # noqa: B018 - validates the options now (port, memory fraction) rather than at start
    return plan
