"""The model a training run starts from: precision, base weights, LoRA (new or resumed from an
adapter), the fused kernel, and the hook that keeps LoRA checkpoints to the trainable weights.

Shared by the warm-up trainer (:mod:`.trainer`) and GRPO (:mod:`.grpo`), which
both pick the precision the same way. Heavy libraries are required lazily.
"""

from __future__ import annotations

from typing import Any

from aw_lookahead._extras import require

from ._lora_kernel import use_fused_lora
from .config import TrainConfig

__all__ = ["build_model", "mixed_precision", "trainable_only"]


def mixed_precision(torch: Any, precision: str) -> str:
    """accelerate's mixed-precision mode for ``precision``: ``"bf16"`` or ``"no"``; any other
    setting picks bf16 where a CUDA device supports it."""
    if precision == "bf16":
        return "bf16"
    if precision == "fp32":
        return "no"
    cuda = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    return "bf16" if cuda else "no"


def build_model(cfg: TrainConfig, torch: Any, mixed: str) -> Any:
    """The model to train: the base (bf16 for LoRA under bf16, else fp32), with a new LoRA
    adapter or the one ``cfg.init_adapter`` resumes, and the fused kernel when asked."""
    transformers = require("train", "transformers")
    dtype = torch.bfloat16 if (mixed == "bf16" and cfg.method == "lora") else torch.float32
    model = transformers.AutoModelForCausalLM.from_pretrained(str(cfg.model), dtype=dtype)
    model.config.use_cache = False
    if cfg.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if cfg.method == "lora" and cfg.init_adapter is not None:
        peft = require("train", "peft")
        model = peft.PeftModel.from_pretrained(model, str(cfg.init_adapter), is_trainable=True)
        for param in model.parameters():  # a bf16 adapter trains in the base's dtype
            if param.requires_grad and param.dtype != dtype:
                param.data = param.data.to(dtype)
        if cfg.gradient_checkpointing:
            model.enable_input_require_grads()
    elif cfg.method == "lora":
        peft = require("train", "peft")
        model = peft.get_peft_model(model, cfg.lora_config())
        if cfg.gradient_checkpointing:
            model.enable_input_require_grads()
    if cfg.method == "lora" and cfg.lora_kernel == "fused":
        use_fused_lora(model, torch)
    return model


def trainable_only(model: Any) -> Any:
    """A save-state hook that keeps only the trainable weights (a LoRA checkpoint stays small)."""
    names = {n for n, p in model.named_parameters() if p.requires_grad}

    def hook(models: list[Any], weights: list[dict[str, Any]], _out: str) -> None:
        for i, state in enumerate(weights):
            weights[i] = {k: v for k, v in state.items() if k in names}

    return hook
