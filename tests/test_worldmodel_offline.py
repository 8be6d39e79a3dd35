"""VLLMOfflineWorldModel: the WorldModel protocol over an in-process ``vllm.LLM``.

The engine runs in a child process (a small script): vLLM spawns its engine
core and emits deprecation warnings at import, which would trip
``filterwarnings = error`` and leave threads in the test process. On the CPU
build with 2 cores the engine starts in ~32 s and the whole child takes ~50 s
(start, two batches, shutdown), measured with ``time`` on the script below.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aw_lookahead.errors import ConfigError
from aw_lookahead.worldmodel import Prediction, WorldModel

SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys, time

    def main():
        from aw_lookahead.trajectory import Trajectory, Turn
        from aw_lookahead.worldmodel import VLLMOfflineWorldModel

        started = time.perf_counter()
        wm = VLLMOfflineWorldModel(
            sys.argv[1], served_name="smollm2", max_tokens=24, temperature=0.0, top_k=None,
            llm_kwargs=dict(max_model_len=4096, gpu_memory_utilization=0.2,
                            enforce_eager=True, enable_prefix_caching=True),
        )
        wm.engine()
        start_s = time.perf_counter() - started
        samples = []
        for i in range(8):
            t = Trajectory(domain="terminal", task=f"Inspect project {i}.", turns=[
                Turn(action=[{"keystrokes": "ls\\n", "duration": 0.5}],
                     observation=f"$ ls\\nREADME.md src_{i} tests\\n$ "),
            ])
            samples.append((t, [{"keystrokes": f"cat src_{i}/main.py\\n", "duration": 0.5}]))
        batch = asyncio.run(wm.predict_batch(samples))
        shared = samples[0][0]
        asyncio.run(wm.predict_many(shared, ["pwd"]))
        many = asyncio.run(wm.predict_many(shared, ["pwd", "whoami", "date"]))
        wm.close()
        wm.close()
        print("RESULT " + json.dumps({
            "start_s": start_s,
            "model_id": wm.model_id,
            "batch": [p.model_dump(mode="json") if hasattr(p, "model_dump") else repr(p)
                      for p in batch],
            "many": [p.model_dump(mode="json") for p in many],
        }))

    if __name__ == "__main__":
        main()
    """
)


def test_importing_the_package_does_not_import_vllm() -> None:
    code = (
        "import sys\n"
        "import aw_lookahead.worldmodel as w\n"
        "assert 'vllm' not in sys.modules\n"
        "cls = w.VLLMOfflineWorldModel\n"
        "assert 'vllm' not in sys.modules, 'the class import must stay light'\n"
        "print(cls.__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "VLLMOfflineWorldModel"


def test_needs_a_model_or_an_engine() -> None:
    from aw_lookahead.worldmodel import VLLMOfflineWorldModel

    with pytest.raises(ConfigError, match="model="):
        VLLMOfflineWorldModel()
    with pytest.raises(ConfigError, match="max_tokens"):
        VLLMOfflineWorldModel("x", max_tokens=0)
    wm = VLLMOfflineWorldModel("some/model", thinking=False)
    assert isinstance(wm, WorldModel)
    assert "think=False" in wm.model_id


@pytest.mark.integration
@pytest.mark.slow
def test_batch_of_eight_on_the_cpu_build(embedded_model_path: Path, tmp_path: Path) -> None:
    pytest.importorskip("vllm")
    script = tmp_path / "offline_batch.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = dict(os.environ, HF_HUB_OFFLINE="1", VLLM_CPU_KVCACHE_SPACE="1")
    done = subprocess.run(
        [sys.executable, str(script), str(embedded_model_path)],
        capture_output=True, text=True, timeout=400, check=False, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
    assert lines, done.stdout[-2000:] + done.stderr[-2000:]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    batch = [Prediction.model_validate(p) for p in result["batch"]]
    assert len(batch) == 8
    for prediction in batch:
        assert prediction.observation.strip()
        assert prediction.model == "smollm2"
        assert prediction.usage.prompt_tokens > 50
        assert 0 < prediction.usage.completion_tokens <= 24
        assert prediction.finish_reason in ("stop", "length")
    assert [p.action for p in batch] == [
        [{"keystrokes": f"cat src_{i}/main.py\n", "duration": 0.5}] for i in range(8)
    ]
    many = [Prediction.model_validate(p) for p in result["many"]]
    assert [p.action for p in many] == ["pwd", "whoami", "date"]
    # the shared history was computed by the previous call: the engine's prefix cache reuses it
    assert all((p.usage.cached_tokens or 0) > 0 for p in many)
