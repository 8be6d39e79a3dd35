"""A LoRA linear layer in one autograd node: the same function as PEFT's, fewer passes.

PEFT computes ``base(x) + lora_B(lora_A(dropout(x))) * scaling`` as separate
autograd nodes, so every adapted layer writes the low-rank product, scales
it and adds it to the base output in the forward pass, and does the mirror
image (a scaled copy of the gradient, a second input gradient and a sum)
in the backward pass. On a CPU those full-size elementwise passes cost
about as much as the rank-16 products themselves. Here the low-rank term is
accumulated into the base output by the matrix multiply
(``addmm_(..., alpha=scaling)``) and the two input gradients are summed the
same way, with the same products otherwise; the result equals PEFT's up to
float rounding (the trainer's test compares step losses).

Only plain LoRA on a frozen ``nn.Linear`` base is routed here (no dropout,
no DoRA or other variant, one active adapter, not merged); anything else,
and any call with extra arguments, goes through PEFT's own forward. The
adapter's parameters and saved files are PEFT's, unchanged.
"""

from __future__ import annotations

from typing import Any

__all__ = ["use_fused_lora"]


def _function(torch: Any) -> Any:
    class LoraLinear(torch.autograd.Function):  # type: ignore[misc]
        @staticmethod
        def forward(
            ctx: Any, x: Any, weight: Any, bias: Any, a: Any, b: Any, scaling: float
        ) -> Any:
            flat = x.reshape(-1, x.shape[-1])
            xa = torch.mm(flat, a.t())
            out = torch.nn.functional.linear(flat, weight, bias)
            out.addmm_(xa, b.t(), alpha=scaling)
            ctx.save_for_backward(flat, xa, weight, a, b)
            ctx.scaling = scaling
            ctx.in_shape = x.shape
            return out.view(*x.shape[:-1], out.shape[-1])

        @staticmethod
        def backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
            flat, xa, weight, a, b = ctx.saved_tensors
            g = grad.reshape(-1, grad.shape[-1])
            g_xa = torch.mm(g, b).mul_(ctx.scaling)
            g_a = torch.mm(g_xa.t(), flat) if ctx.needs_input_grad[3] else None
            g_b = torch.mm(g.t(), xa).mul_(ctx.scaling) if ctx.needs_input_grad[4] else None
            g_x = None
            if ctx.needs_input_grad[0]:
                g_x = torch.mm(g, weight).addmm_(g_xa, a).view(ctx.in_shape)
            return g_x, None, None, g_a, g_b, None

    return LoraLinear


def _plain(module: Any, torch: Any) -> str | None:
    """The adapter name when ``module`` is plain single-adapter LoRA on a frozen Linear."""
    names = list(module.active_adapters)
    if len(names) != 1 or names[0] not in module.lora_A:
        return None
    name = names[0]
    base = module.get_base_layer()
    if type(base) is not torch.nn.Linear or base.weight.requires_grad:
        return None
    if base.bias is not None and base.bias.requires_grad:
        return None
    if name in getattr(module, "lora_variant", {}) or module.use_dora.get(name, False):
        return None
    if not isinstance(module.lora_dropout[name], torch.nn.Identity):
        return None
    return str(name)


def use_fused_lora(model: Any, torch: Any) -> int:
    """Route ``model``'s plain LoRA linear layers through the one-node kernel; returns how many.

    Call before wrapping the model (``accelerate.prepare``). A call that
    finds the layer disabled, merged, with other adapters, under autocast or
    with mixed dtypes goes to PEFT's forward instead.
    """
    from peft.tuners.lora.layer import Linear

    fn = _function(torch)
    count = 0
    for module in model.modules():
        if not isinstance(module, Linear):
            continue
        name = _plain(module, torch)
        if name is None:
            continue
        module.forward = _forward(module, name, fn, module.forward, torch)  # type: ignore[method-assign]
        count += 1
    return count


def _forward(module: Any, name: str, fn: Any, peft_forward: Any, torch: Any) -> Any:
    base = module.get_base_layer()

    def forward(x: Any, *args: Any, **kwargs: Any) -> Any:
        if (
            args
            or kwargs
            or module.disable_adapters
            or module.merged
            or list(module.active_adapters) != [name]
            or torch.is_autocast_enabled(x.device.type)
        ):
            return peft_forward(x, *args, **kwargs)
        a, b = module.lora_A[name].weight, module.lora_B[name].weight
        if not x.dtype == base.weight.dtype == a.dtype == b.dtype:
            return peft_forward(x, *args, **kwargs)
        return fn.apply(x, base.weight, base.bias, a, b, module.scaling[name])

    return forward
