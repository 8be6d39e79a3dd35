#!/usr/bin/env bash
# Qwen-AgentWorld-397B-A17B over 2 nodes x 8 GPUs: vLLM's own multi-node
# serving (tensor parallel inside a node, pipeline parallel across nodes, Ray
# as the executor) behind the same OpenAI endpoint on the head node.
#
# GPU memory: BF16 weights ~800 GB; 2 nodes of 8x 80 GB (1280 GB) leave
# ~400 GB for KV cache. One node of 8x H200 (1128 GB) also fits: run the same
# command with --nodes 1. [estimate from the parameter count, NOT measured]
#
# 1. Every node: same image, same model path or HF cache, same Python env.
# 2. Head node:    ray start --head --port 6379
# 3. Other nodes:  ray start --address <head-ip>:6379
# 4. Head node:    the command below (it runs on the Ray cluster).
#
# The vLLM command it runs (checked by tests/test_serving_presets.py):
#   python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen-AgentWorld-397B-A17B --served-model-name Qwen/Qwen-AgentWorld-397B-A17B --host 0.0.0.0 --port 8000 --max-model-len 32768 --gpu-memory-utilization 0.9 --enable-prompt-tokens-details --reasoning-parser qwen3 --language-model-only --trust-remote-code --tensor-parallel-size 8 --pipeline-parallel-size 2 --distributed-executor-backend ray --enable-prefix-caching
set -euo pipefail
# Other machines can reach this port: export VLLM_API_KEY (clients set
# AW_LOOKAHEAD_API_KEY to the same value) and drop --allow-unauthenticated.
aw-lookahead serve --preset qwen-agentworld-397b-a17b --gpus 8 --nodes 2 --host 0.0.0.0 --port 8000 --ready-timeout 3600 --allow-unauthenticated
