#!/usr/bin/env bash
# Qwen-AgentWorld-35B-A3B on one node with tensor parallel over 4 GPUs, full 256K context.
#
# GPU memory: 4x 80 GB (H100/A100) or more. BF16 weights ~70 GB are split
# over the 4 GPUs; the rest is KV cache for --max-model-len 262144, the
# setting of the model card's own command. [estimate, NOT measured]
# Use --gpus 2 for 2x H200. The GPU count must divide the attention heads.
#
# The vLLM command it runs (checked by tests/test_serving_presets.py):
#   python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen-AgentWorld-35B-A3B --served-model-name agentworld --host 0.0.0.0 --port 8000 --max-model-len 262144 --gpu-memory-utilization 0.9 --enable-prompt-tokens-details --reasoning-parser qwen3 --language-model-only --trust-remote-code --tensor-parallel-size 4 --enable-prefix-caching
set -euo pipefail
pip install 'aw-lookahead[vllm]'
# Other machines can reach this port: export VLLM_API_KEY (clients set
# AW_LOOKAHEAD_API_KEY to the same value) and drop --allow-unauthenticated.
aw-lookahead serve --preset qwen-agentworld-35b-a3b --gpus 4 --max-model-len 262144 --served-model-name agentworld --host 0.0.0.0 --port 8000 --allow-unauthenticated
