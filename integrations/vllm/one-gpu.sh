#!/usr/bin/env bash
# Qwen-AgentWorld-35B-A3B on ONE GPU.
#
# GPU memory: BF16 weights are ~70 GB; one H200 (141 GB) leaves room for the KV
# cache of a 32K context. vLLM's Qwen3.5-35B-A3B recipe gives ~84 GB as the
# minimum. [estimate from the vLLM recipe, NOT measured: no GPU was available]
# An 80 GB GPU does not fit BF16 with a useful KV cache: use tensor-parallel.sh.
#
# Flags that matter: --reasoning-parser qwen3 (thinking goes to `reasoning`),
# --language-model-only (the checkpoint has no vision weights; required),
# --trust-remote-code, --enable-prefix-caching (explicit: the model is a
# Gated-DeltaNet hybrid whose prefix cache is experimental; check the hit rate
# with `aw-lookahead stats`), --enable-prompt-tokens-details (cached tokens per
# reply).
#
# The vLLM command it runs (checked by tests/test_serving_presets.py):
#   python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen-AgentWorld-35B-A3B --served-model-name Qwen/Qwen-AgentWorld-35B-A3B --host 127.0.0.1 --port 8000 --max-model-len 32768 --gpu-memory-utilization 0.9 --enable-prompt-tokens-details --reasoning-parser qwen3 --language-model-only --trust-remote-code --tensor-parallel-size 1 --enable-prefix-caching
set -euo pipefail
pip install 'aw-lookahead[vllm]'
aw-lookahead serve --preset qwen-agentworld-35b-a3b --gpus 1 --max-model-len 32768 --port 8000
