#!/usr/bin/env bash
# Regenerate the embedded model's data and retrain its LoRA adapter from scratch, then ship it
# into the package (src/aw_lookahead/embedded/adapter_weights/). `make embedded-model` runs this.
#
#   scripts/train_embedded.sh                 # defaults below: 3 epochs, many hours on a 2-core CPU
#   STOP_AFTER=200 scripts/train_embedded.sh  # one slice; run again to continue
#   N_TERMINAL=600 MAX_STEPS=40 scripts/train_embedded.sh    # a smaller run
#   INIT_ADAPTER=src/aw_lookahead/embedded/adapter_weights MAX_STEPS=600 scripts/train_embedded.sh
#                                             # continue from the shipped adapter (warm start)
#
# Re-running continues an interrupted training run (the same OUT folder is resumed) as long as
# the data folders are unchanged; set FRESH=1 to delete OUT and start over. Every setting is an
# environment variable so the model card can quote the exact command.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PY:-.venv/bin/python}
OUT=${OUT:-runs/embedded}
DATA=${DATA:-runs/embedded-data}
DATA_SEED=${DATA_SEED:-1}
SEED=${SEED:-0}
N_TERMINAL=${N_TERMINAL:-3200}
N_MCP=${N_MCP:-800}
MAX_LEN=${MAX_LEN:-2048}
EPOCHS=${EPOCHS:-3}
MAX_STEPS=${MAX_STEPS:-}
BATCH=${BATCH:-1}
GRAD_ACCUM=${GRAD_ACCUM:-4}
LR=${LR:-3e-4}
LORA_R=${LORA_R:-16}
LORA_ALPHA=${LORA_ALPHA:-32}
PROFILE=${PROFILE:-short}
THREADS=${THREADS:-1}
LEAD_WEIGHT=${LEAD_WEIGHT:-1}
SAVE_EVERY=${SAVE_EVERY:-25}
STOP_AFTER=${STOP_AFTER:-}
INIT_ADAPTER=${INIT_ADAPTER:-}
KEEP=${KEEP:-2}
# held-out loss on the validation families while training; the run stops once EARLY_STOP
# evaluations in a row have not improved it (EARLY_STOP= runs every step; EVAL_DATA= scores none)
EVAL_DATA=${EVAL_DATA-"$DATA/terminal/validation.jsonl $DATA/mcp/validation.jsonl"}
EVAL_EVERY=${EVAL_EVERY:-100}
EVAL_LIMIT=${EVAL_LIMIT:-160}
EVAL_METRIC=${EVAL_METRIC:-lead_loss}
EARLY_STOP=${EARLY_STOP-3}
# a warm start is scored before its first step too, so a run that never beats it ships it back
EVAL_ON_START=${EVAL_ON_START-${INIT_ADAPTER:+1}}
AWL=("$PY" -m aw_lookahead)

if [[ "${FRESH:-0}" == 1 ]]; then rm -rf "$OUT"; fi

# 1. data, recorded from the real sandbox and real MCP servers, split by template family
if [[ ! -f "$DATA/terminal/manifest.json" ]]; then
  "${AWL[@]}" data terminal --n "$N_TERMINAL" --seed "$DATA_SEED" --out "$DATA/terminal"
fi
if [[ ! -f "$DATA/mcp/manifest.json" ]]; then
  "${AWL[@]}" data mcp --n "$N_MCP" --seed "$DATA_SEED" --out "$DATA/mcp"
fi

# 2. warm-up SFT of a LoRA adapter on the raw base (every kept turn of a trajectory a target)
BASE=$("$PY" -c 'from aw_lookahead.embedded import prepare_embedded_model as p; print(p(base_only=True))')
# the MCP split is listed twice: it has a quarter as many trajectories as the terminal one
args=(train --model "$BASE" --data "$DATA/terminal/train.jsonl" "$DATA/mcp/train.jsonl" "$DATA/mcp/train.jsonl"
      --out "$OUT" --method lora --targets all --max-len "$MAX_LEN" --epochs "$EPOCHS"
      --batch-size "$BATCH" --grad-accum "$GRAD_ACCUM" --lr "$LR" --scheduler cosine
      --warmup-steps 8 --lora-r "$LORA_R" --lora-alpha "$LORA_ALPHA" --save-every "$SAVE_EVERY" --keep-checkpoints "$KEEP"
      --no-gradient-checkpointing --prompt-profile "$PROFILE" --threads "$THREADS" --lead-weight "$LEAD_WEIGHT"
      --seed "$SEED")
if [[ -n "$MAX_STEPS" ]]; then args+=(--max-steps "$MAX_STEPS"); fi
if [[ -n "$EVAL_DATA" ]]; then
  read -r -a eval_files <<< "$EVAL_DATA"
  args+=(--eval-data "${eval_files[@]}" --eval-every "$EVAL_EVERY" --eval-limit "$EVAL_LIMIT"
         --eval-metric "$EVAL_METRIC")
  if [[ -n "$EARLY_STOP" ]]; then args+=(--early-stop "$EARLY_STOP"); fi
  if [[ "$EVAL_ON_START" == 1 ]]; then args+=(--eval-on-start); fi
fi
if [[ -n "$STOP_AFTER" ]]; then args+=(--stop-after "$STOP_AFTER"); fi
if [[ -d "$OUT/checkpoints" ]]; then args+=(--resume); fi
if [[ -n "$INIT_ADAPTER" ]]; then args+=(--init-adapter "$INIT_ADAPTER"); fi
"${AWL[@]}" "${args[@]}"
if [[ ! -f "$OUT/adapter/adapter_model.safetensors" ]]; then
  echo "training stopped before the end (--stop-after); run this script again to continue"
  exit 0
fi

# the adapter of the best held-out evaluation when there were any, else the last step's
CHOSEN="$OUT/adapter"
if [[ -d "$OUT/best-adapter" ]]; then CHOSEN="$OUT/best-adapter"; fi
BEST_STEP=$("$PY" -c 'import json,sys; h=json.load(open(sys.argv[1])).get("heldout") or {}; print(h.get("best_step"))' "$OUT/train_result.json")
if [[ "$BEST_STEP" == 0 ]]; then
  echo "no held-out evaluation beat the starting adapter (step 0): nothing new to ship"
  exit 0
fi
if [[ "${SHIP:-1}" != 1 ]]; then
  echo "trained; not shipped (SHIP=0): compare $CHOSEN with the shipped one first"
  exit 0
fi
# 3. ship: bf16 copy into the package + provenance.json + docs/embedded-model-loss.png
"$PY" scripts/ship_adapter.py --run "$OUT" --adapter "$CHOSEN" --data "$DATA/terminal" "$DATA/mcp" \
  --command "scripts/train_embedded.sh (DATA_SEED=$DATA_SEED SEED=$SEED N_TERMINAL=$N_TERMINAL N_MCP=$N_MCP MAX_LEN=$MAX_LEN EPOCHS=$EPOCHS MAX_STEPS=$MAX_STEPS INIT_ADAPTER=$INIT_ADAPTER BATCH=$BATCH GRAD_ACCUM=$GRAD_ACCUM LR=$LR LORA_R=$LORA_R LORA_ALPHA=$LORA_ALPHA PROFILE=$PROFILE LEAD_WEIGHT=$LEAD_WEIGHT EVAL_EVERY=$EVAL_EVERY EVAL_LIMIT=$EVAL_LIMIT EVAL_METRIC=$EVAL_METRIC EARLY_STOP=$EARLY_STOP EVAL_ON_START=$EVAL_ON_START)"

# 4. held-out numbers for the model card (base vs adapter, one server)
if [[ "${BENCH:-1}" == 1 ]]; then
  "$PY" bench/embedded_fidelity.py --terminal "$DATA/terminal" --mcp "$DATA/mcp" \
    --limit "${BENCH_LIMIT:-100}" --json | tee "$OUT/fidelity.json"
fi
