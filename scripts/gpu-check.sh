#!/usr/bin/env bash
# The GPU check (not part of `make test`): on a machine with an NVIDIA GPU and vLLM and/or SGLang
# installed, `llmload tune experiments/gpu-engines.toml`: each engine with and without CUDA
# graphs and vLLM with a speculative drafter, started, waited for, swept 1..128, stopped, and the
# answer: the best configuration under the objective, with the comparison in RESULTS_DIR.
#
#   scripts/gpu-check.sh MODEL [RESULTS_DIR]
set -euo pipefail

MODEL="${1:?usage: scripts/gpu-check.sh MODEL [RESULTS_DIR]}"
RESULTS="${2:-results}"
exec "${LLMLOAD:-llmload}" tune "$(dirname "$0")/../experiments/gpu-engines.toml" \
    --results-dir "$RESULTS" --set model="$MODEL"
