"""Serving presets and the recipes in integrations/vllm/: the exact vLLM commands.

The documented commands are compared token for token with ``serve --dry-run``;
one integration test feeds every preset's flags to vLLM's own argument parser
(in a child process), so a flag vLLM does not know fails here, not on a GPU.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from aw_lookahead.cli import main
from aw_lookahead.errors import ConfigError
from aw_lookahead.serving.presets import PRESETS, find_preset, plan_serve

ROOT = Path(__file__).resolve().parents[1]
RECIPES = sorted(
    p for p in (ROOT / "integrations" / "vllm").iterdir() if p.suffix in (".sh", ".yaml")
)
ENTRY = "python -m vllm.entrypoints.openai.api_server"
QWEN = ["--reasoning-parser", "qwen3", "--language-model-only", "--trust-remote-code"]


@pytest.fixture(autouse=True)
def _no_key_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)


def dry_run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    cut = args.index("--") if "--" in args else len(args)  # vLLM's own flags come last
    assert main(["serve", *args[:cut], "--dry-run", "--json", *args[cut:]]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def flags(info: dict[str, object]) -> list[str]:
    argv = info["argv"]
    assert isinstance(argv, list)
    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    return [str(a) for a in argv[3:]]


def test_reference_model_preset_has_the_documented_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    info = dry_run(capsys, "--preset", "qwen-agentworld-35b-a3b")
    got = flags(info)
    assert got[:2] == ["--model", "Qwen/Qwen-AgentWorld-35B-A3B"]
    for flag in [*QWEN, "--enable-prefix-caching", "--enable-prompt-tokens-details"]:
        assert flag in got
    assert got[got.index("--tensor-parallel-size") + 1] == "1"
    assert got[got.index("--max-model-len") + 1] == "32768"
    assert info["client_env"] == {
        "AW_LOOKAHEAD_BASE_URL": "http://127.0.0.1:8000/v1",
        "AW_LOOKAHEAD_MODEL": "Qwen/Qwen-AgentWorld-35B-A3B",
        "AW_LOOKAHEAD_SERVER": "vllm",
    }


def test_preset_is_found_from_the_model_id(capsys: pytest.CaptureFixture[str]) -> None:
    info = dry_run(capsys, "--model", "Qwen/Qwen-AgentWorld-397B-A17B")
    assert info["preset"] == "qwen-agentworld-397b-a17b"
    got = flags(info)
    assert got[got.index("--tensor-parallel-size") + 1] == "8"


def test_gpus_nodes_lora_key_and_extra_args(capsys: pytest.CaptureFixture[str]) -> None:
    info = dry_run(
        capsys,
        "--model", "my-org/my-model", "--gpus", "4", "--nodes", "2",
        "--lora", "sft=/runs/sft/adapter", "--lora", "rl=/runs/rl/adapter",
        "--served-model-name", "wm", "--api-key", "sekret-key-0123456789", "--no-prefix-caching",
        "--no-thinking", "--", "--seed", "7",
    )  # fmt: skip
    got = flags(info)
    assert info["preset"] == "default"
    text = shlex.join(got)
    assert "--tensor-parallel-size 4 --pipeline-parallel-size 2" in text
    assert "--distributed-executor-backend ray" in text
    assert "--enable-lora" in got
    assert "--no-enable-prefix-caching" in got
    assert "--lora-modules sft=/runs/sft/adapter rl=/runs/rl/adapter" in text
    assert "--api-key" not in got  # the key reaches vLLM as VLLM_API_KEY, never in `ps`
    assert "sekret-key-0123456789" not in json.dumps(info)
    assert got[-2:] == ["--seed", "7"]
    assert json.loads(got[got.index("--default-chat-template-kwargs") + 1]) == {
        "enable_thinking": False
    }
    assert info["server_env"] == {
        "HF_HUB_OFFLINE": "0",
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True",
        "VLLM_API_KEY": "<hidden>",
    }
    assert info["client_env"] == {
        "AW_LOOKAHEAD_BASE_URL": "http://127.0.0.1:8000/v1",
        "AW_LOOKAHEAD_MODEL": "wm",
        "AW_LOOKAHEAD_SERVER": "vllm",
        "AW_LOOKAHEAD_API_KEY": "<hidden>",
    }
    plan = plan_serve("default", model="my-org/my-model", api_key="sekret-key-0123456789")
    assert plan.server_env()["VLLM_API_KEY"] == "sekret-key-0123456789"
    assert "sekret-key-0123456789" not in plan.argv
    server = plan.server()
    assert server.env()["VLLM_API_KEY"] == "sekret-key-0123456789"
    assert "sekret-key-0123456789" not in server.command()


def test_api_key_from_the_environment_and_open_binds(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = ["serve", "--model", "my-org/my-model", "--dry-run"]
    assert main([*base, "--host", "0.0.0.0"]) == 2
    assert "--allow-unauthenticated" in capsys.readouterr().err
    assert main([*base, "--api-key", ""]) == 2
    assert "--api-key is empty" in capsys.readouterr().err
    info = dry_run(capsys, "--model", "my-org/my-model", "--host", "0.0.0.0",
                   "--allow-unauthenticated")  # fmt: skip
    assert "VLLM_API_KEY" not in info["server_env"]  # type: ignore[operator]
    monkeypatch.setenv("VLLM_API_KEY", "from-env-0123456789ab")
    info = dry_run(capsys, "--model", "my-org/my-model", "--host", "0.0.0.0")
    assert info["server_env"]["VLLM_API_KEY"] == "<hidden>"  # type: ignore[index]
    assert "from-env-0123456789ab" not in json.dumps(info)
    monkeypatch.setenv("VLLM_API_KEY", "")
    assert main(base) == 2
    assert "VLLM_API_KEY is empty" in capsys.readouterr().err
    monkeypatch.setenv("VLLM_API_KEY", "k")
    assert main(base) == 2
    assert "VLLM_API_KEY is 1 character long; a token must have at least 16" in (
        capsys.readouterr().err
    )


def test_local_preset_has_the_cpu_flags(capsys: pytest.CaptureFixture[str]) -> None:
    info = dry_run(capsys, "--local", "--runtime", "vllm", "--port", "8123")
    assert info["runtime"] == "vllm"
    got = flags(info)
    for flag in ("--enforce-eager", "--enable-prompt-tokens-details", "--enable-prefix-caching"):
        assert flag in got
    assert got[got.index("--gpu-memory-utilization") + 1] == "0.2"
    assert "--no-enable-chunked-prefill" in got
    assert got[got.index("--max-num-batched-tokens") + 1] == "4096"
    assert got[got.index("--served-model-name") + 1] == "smollm2-135m-instruct"
    assert "--tensor-parallel-size" not in got
    assert int(got[got.index("--kv-cache-memory-bytes") + 1]) < 256 * 2**20
    assert got[got.index("--distributed-executor-backend") + 1] == "uni"
    assert info["server_env"] == {
        "HF_HUB_OFFLINE": "1",
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "MALLOC_ARENA_MAX": "2",
        "OMP_WAIT_POLICY": "PASSIVE",
        "AW_LOOKAHEAD_MALLOC_TRIM_S": "10",
        "AW_LOOKAHEAD_INPROC_ENGINE": "1",
    }


def test_plain_dry_run_prints_one_shell_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--preset", "qwen-agentworld-35b-a3b", "--dry-run"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("HF_HUB_OFFLINE=0 ")
    assert "\n" not in line
    assert ENTRY.rsplit(maxsplit=1)[-1] in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--preset", "qwen-agentwrld"], "unknown preset"),
        (["--preset", "default"], "needs a model"),
        (["--local", "--runtime", "vllm", "--gpus", "2"], "CPU build"),
        (["--local", "--gpus", "2"], "--gpus apply to vLLM only; llama.cpp serves the GGUF"),
        (["--local", "--model", "m"], "(drop them, add --runtime vllm)"),
        (["--model", "a/b", "--lora", "nopath"], "NAME=PATH"),
        (["--model", "a/b", "--gpus", "0"], "--gpus must be"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["serve", *args, "--dry-run"]) == 2
    assert message in capsys.readouterr().err


def test_find_preset_lists_choices_on_a_typo() -> None:
    with pytest.raises(ConfigError, match="qwen-agentworld-35b-a3b"):
        find_preset("agentwrld")
    assert find_preset("QWEN/qwen-agentworld-35b-a3b").name == "qwen-agentworld-35b-a3b"
    assert all(p.gpu_memory for p in PRESETS.values())
    assert all("not measured" in p.gpu_memory for p in PRESETS.values() if not p.cpu)


def _recipe(path: Path) -> tuple[list[str], list[str]]:
    text = path.read_text(encoding="utf-8")
    serve = re.findall(r"aw-lookahead serve ([^\n\"]+)", text)
    documented = re.findall(rf"#\s+{re.escape(ENTRY)} ([^\n]+)", text)
    assert len(serve) == 1, f"{path.name}: expected one `aw-lookahead serve` line"
    assert len(documented) == 1, f"{path.name}: expected one documented vLLM command"
    return shlex.split(serve[0]), shlex.split(documented[0])


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.name)
def test_recipe_documents_the_command_serve_runs(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    args, documented = _recipe(path)
    assert flags(dry_run(capsys, *args)) == documented
    text = path.read_text(encoding="utf-8")
    assert "GPU memory:" in text
    assert "NOT measured" in text


def test_recipes_cover_one_gpu_tensor_parallel_multi_node_and_kubernetes() -> None:
    assert {p.name for p in RECIPES} >= {
        "one-gpu.sh", "tensor-parallel.sh", "multi-node.sh", "kubernetes.yaml",
    }  # fmt: skip


_PARSE_WITH_VLLM = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
from vllm.utils.argparse_utils import FlexibleArgumentParser
from vllm.entrypoints.launchers.cli_args import make_arg_parser
bad = {}
for name, argv in json.loads(sys.argv[1]).items():
    parser = make_arg_parser(FlexibleArgumentParser())
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        bad[name] = f"exit {exc.code}"
print(json.dumps(bad))
"""


@pytest.mark.integration
def test_vllm_own_parser_accepts_every_preset() -> None:
    pytest.importorskip("vllm")
    commands = {
        name: plan_serve(name, model="some/model" if preset.model is None else None).argv[3:]
        for name, preset in PRESETS.items()
    }
    commands["multi-node+lora"] = plan_serve(
        "qwen-agentworld-397b-a17b", nodes=2, loras=["a=/x"], api_key="k", thinking=False
    ).argv[3:]
    done = subprocess.run(
        [sys.executable, "-c", _PARSE_WITH_VLLM, json.dumps(commands)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {}, done.stderr[-3000:]
