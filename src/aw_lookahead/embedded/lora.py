"""The LoRA adapter shipped with the package, and its merge into the embedded model.

The adapter folder (``aw_lookahead/embedded/adapter_weights/``, package data) holds
what our trainer writes to ``<run>/adapter`` (``adapter_config.json``,
``adapter_model.safetensors``) plus ``provenance.json``: how it was made, on
which data, and whether it is a placeholder from a few-step smoke run.

:func:`adapter_digest` is a sha256 over the two adapter files (names and
bytes, not provenance), so a retrained adapter changes the digest and the
merged model folder is rebuilt, while editing the model card notes does not.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from aw_lookahead._extras import require
from aw_lookahead.errors import ConfigError, MissingExtraError, RunError

__all__ = [
    "ADAPTER_FILES",
    "PACKAGED_ADAPTER_DIR",
    "PROVENANCE_FILE",
    "AdapterInfo",
    "AdapterProvenance",
    "adapter_digest",
    "merge_adapter",
    "read_adapter",
]

ADAPTER_FILES: tuple[str, ...] = ("adapter_config.json", "adapter_model.safetensors")
PROVENANCE_FILE = "provenance.json"
PACKAGED_ADAPTER_DIR = Path(__file__).resolve().parent / "adapter_weights"


class AdapterProvenance(BaseModel):
    """``provenance.json``: what the shipped adapter is. Unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    placeholder: bool = Field(
        description="true for a smoke-run adapter that only exercises the pipeline"
    )
    base_model: str
    created: str = ""
    command: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    training: dict[str, Any] = Field(default_factory=dict)
    notes: str = ""


class AdapterInfo(BaseModel):
    """A located, hashed adapter folder."""

    path: Path
    sha256: str
    provenance: AdapterProvenance | None = None

    @property
    def placeholder(self) -> bool:
        """True when the provenance says placeholder (an adapter without provenance is not)."""
        return self.provenance is not None and self.provenance.placeholder


def adapter_digest(folder: str | os.PathLike[str]) -> str:
    """sha256 over the adapter files' names and bytes (64 hex digits)."""
    digest = hashlib.sha256()
    root = Path(folder)
    for name in ADAPTER_FILES:
        digest.update(name.encode() + b"\0")
        with (root / name).open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


def read_adapter(folder: str | os.PathLike[str] | None = None) -> AdapterInfo:
    """Locate and hash an adapter folder (default: the packaged one).

    Raises :class:`~aw_lookahead.errors.ConfigError` naming the missing file or
    the bad provenance field.
    """
    root = Path(folder) if folder is not None else PACKAGED_ADAPTER_DIR
    missing = [name for name in ADAPTER_FILES if not (root / name).is_file()]
    if missing:
        where = "the packaged adapter" if folder is None else "the adapter folder"
        raise ConfigError(
            f"{where} {root} lacks {', '.join(missing)}; pass the `adapter` folder a "
            "`aw-lookahead train --method lora` run wrote, reinstall aw-lookahead, or use "
            "base_only=True (`serve --local --base-only`)"
        )
    provenance = None
    prov_path = root / PROVENANCE_FILE
    if prov_path.is_file():
        try:
            provenance = AdapterProvenance.model_validate_json(prov_path.read_text("utf-8"))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "<root>"
            raise ConfigError(f"{prov_path}: field {field!r}: {err['msg']}") from exc
    return AdapterInfo(path=root, sha256=adapter_digest(root), provenance=provenance)


def merge_adapter(base: Path, adapter: Path, out: Path) -> None:
    """Write ``base`` with ``adapter`` merged in (bf16 safetensors + tokenizer) to ``out``.

    Uses PEFT's ``merge_and_unload`` in fp32, then casts to bf16 like the base
    conversion, so the served model has no LoRA layers left.
    """
    torch = require("embedded", "torch")
    transformers = require("embedded", "transformers")
    try:
        peft = require("embedded", "peft")
    except MissingExtraError as exc:
        raise MissingExtraError(
            "embedded",
            "peft",
            hint="; it merges the shipped adapter into the embedded model: `pip install peft`",
        ) from exc
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(base))
        model = peft.PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        model = model.to(torch.bfloat16)
        model.config.dtype = torch.bfloat16
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    except Exception as exc:
        raise RunError(
            f"merging the adapter {adapter} into {base} failed: {exc!r}. Check that the "
            "adapter was trained on the embedded model (SmolLM2-135M-Instruct), or serve "
            "the base model with base_only=True (`serve --local --base-only`)"
        ) from exc
