#!/usr/bin/env bash
# The GPU check (not part of `make test`): on a machine with an NVIDIA GPU and vLLM and/or SGLang
# installed, serve a small model with each engine, with and without CUDA graphs, sweep 1..128
# against each, and compare the runs side by side. About 10 minutes with a 0.5B-1B model.
#
#   scripts/gpu-check.sh MODEL_PATH [RESULTS_DIR]
#
# Each server runs on 127.0.0.1; `llmload wait` waits for it (loading takes minutes), and it is
# stopped before the next starts. Engines that are not installed are skipped, saying so.
set -euo pipefail

MODEL="${1:?usage: scripts/gpu-check.sh MODEL_PATH [RESULTS_DIR]}"
RESULTS="${2:-results/gpu-check}"
PORT="${PORT:-8123}"
LEVELS="${LEVELS:-1,2,4,8,16,32,64,128}"
STAGE_S="${STAGE_S:-15}"
LLMLOAD="${LLMLOAD:-llmload}"
HOST="http://127.0.0.1:$PORT"
mkdir -p "$RESULTS"
runs=()

serve_and_sweep() {  # NAME COMMAND...
    local name="$1"; shift
    local log="$RESULTS/$name.server.log"
    echo "gpu-check: $name: $*"
    "$@" >"$log" 2>&1 &
    local pid=$!
    if "$LLMLOAD" wait --host "$HOST" --timeout 900 --log "$log" --log-stall 300 &&
        "$LLMLOAD" sweep --host "$HOST" --no-wait --results-dir "$RESULTS" --run-id "$name" \
            --levels "$LEVELS" --stage-s "$STAGE_S" --max-tokens 256 --ignore-eos --prompt-tokens 256; then
        runs+=("$RESULTS/$name")
    else
        echo "gpu-check: $name failed; its log: $log" >&2
    fi
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

if python3 -c "import vllm" 2>/dev/null; then
    serve_and_sweep vllm vllm serve "$MODEL" --host 127.0.0.1 --port "$PORT"
    serve_and_sweep vllm-eager vllm serve "$MODEL" --host 127.0.0.1 --port "$PORT" --enforce-eager
else
    echo "gpu-check: vLLM is not installed here (pip install vllm); skipping it"
fi
if python3 -c "import sglang" 2>/dev/null; then
    serve_and_sweep sglang python3 -m sglang.launch_server --model-path "$MODEL" --host 127.0.0.1 --port "$PORT"
    serve_and_sweep sglang-nograph python3 -m sglang.launch_server --model-path "$MODEL" \
        --host 127.0.0.1 --port "$PORT" --disable-cuda-graph
else
    echo "gpu-check: SGLang is not installed here (pip install sglang); skipping it"
fi
if [ ${#runs[@]} -ge 2 ]; then
    "$LLMLOAD" compare "${runs[@]}" --format markdown | tee "$RESULTS/compare.md"
else
    echo "gpu-check: fewer than two runs to compare" >&2
    exit 1
fi
