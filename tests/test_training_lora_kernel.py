"""The one-node LoRA layer computes PEFT's function: outputs and every gradient match, and
whatever it does not cover (dropout, a disabled adapter) still runs through PEFT."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from aw_lookahead.training._lora_kernel import use_fused_lora

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::UserWarning"),
]

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def _tiny_lora(dropout: float = 0.0) -> tuple[Any, Any]:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    peft = pytest.importorskip("peft")
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    base = transformers.LlamaForCausalLM(config)
    lora = peft.LoraConfig(r=4, lora_alpha=8, lora_dropout=dropout, target_modules=TARGETS)
    model = peft.get_peft_model(base, lora)
    for name, param in model.named_parameters():  # B starts at zero: make the term count
        if "lora_B" in name:
            torch.nn.init.normal_(param, std=0.05)
    return torch, model


def _loss_and_grads(torch: Any, model: Any, ids: Any) -> tuple[float, dict[str, Any]]:
    model.zero_grad(set_to_none=True)
    logits = model(input_ids=ids).logits
    loss = torch.nn.functional.cross_entropy(logits[0, :-1], ids[0, 1:])
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.requires_grad}
    return float(loss), grads


def test_fused_layers_match_peft_in_loss_and_every_lora_gradient() -> None:
    torch, reference = _tiny_lora()
    fused = copy.deepcopy(reference)
    assert use_fused_lora(fused, torch) == 2 * len(TARGETS)
    ids = torch.randint(0, 64, (1, 24))
    loss_ref, grads_ref = _loss_and_grads(torch, reference, ids)
    loss_fused, grads_fused = _loss_and_grads(torch, fused, ids)
    assert loss_fused == pytest.approx(loss_ref, rel=1e-6)
    assert grads_ref.keys() == grads_fused.keys()
    assert len(grads_ref) == 2 * 2 * len(TARGETS)
    for name, grad in grads_ref.items():
        assert grad.abs().max() > 0, name
        torch.testing.assert_close(grads_fused[name], grad, rtol=1e-5, atol=1e-7)


def test_a_disabled_adapter_and_dropout_still_go_through_peft() -> None:
    torch, model = _tiny_lora()
    use_fused_lora(model, torch)
    ids = torch.randint(0, 64, (1, 12))
    with torch.no_grad():
        with model.disable_adapter():
            off = model(input_ids=ids).logits
        plain = model.get_base_model()
        for module in plain.modules():  # the base layers alone, as if LoRA were absent
            if hasattr(module, "base_layer"):
                module.forward = module.base_layer.forward
        base = plain(input_ids=ids).logits
    torch.testing.assert_close(off, base)
    torch_, dropped = _tiny_lora(dropout=0.1)
    assert use_fused_lora(dropped, torch_) == 0
