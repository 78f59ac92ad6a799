#!/usr/bin/env bash
# `make test` after the installs: lint, types, then the test tiers, each timed, with every
# tier's time, the slowest tests and the timing judge's totals printed at the end (and an exit
# code that fails on any tier, or on a run too noisy to judge its timing).
#
#   unit     no sockets, CPU-bound: one xdist worker per core
#   waiting  integration, e2e, k8s and bench tests that mostly wait on wall-clock windows (a
#            locust run's -t, a server's start): run side by side, $LLMLOAD_TEST_WORKERS at once
#   alone    the tests marked `timing` (they judge stamps against ground truth through the
#            timing judge, tests/support/timing) and `alone` (they take the machine: a CPU hog):
#            one at a time, on a machine the others have left
#   proof    the judge still fails: the sub-millisecond tests with a 3 ms delay injected into
#            the client's reads must fail (tests/proof)
#
# Everything a run leaves is in its output folder ($LLMLOAD_TEST_OUT, default
# results/tests/<UTC time>): each tier's junit XML and the judgements of every timing claim
# (timing/judgements-*.jsonl, summed in timing/timing.json). A test left unjudged (the machine
# was noisier than its bound) runs once more at the end of its tier.
#
# Pass pytest arguments through TESTS_ARGS, e.g. TESTS_ARGS="-k llama" make test.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
BIN="${BIN:-$VENV/bin}"
# Four side by side: with six, fresh-clone runs on 2 cores (2026-12-06) had Locust's start and
# llmload's first look at a local simulator take more than a 6 s run, five times in four runs,
# while the tier saved a minute or two.
WORKERS="${LLMLOAD_TEST_WORKERS:-4}"
OUT="${LLMLOAD_TEST_OUT:-results/tests/$(date -u +%Y%m%dT%H%M%SZ)}"
TIERS=(integration e2e k8s bench)
# shellcheck disable=SC2206
EXTRA=(${TESTS_ARGS:-})
names=() seconds=() codes=()
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
export LLMLOAD_TIMING_DIR="$OUT/timing" LLMLOAD_CANARY_DIR="$OUT/canary"

# The installs: the llama-server build starts first, in the background at the lowest priority
# (it takes about 5 minutes of both cores, and lint, types and the waiting tier leave much of
# them idle), then Debian's packages and the venv side by side. A test that needs the server
# waits for the build (tests/support/llama.py), and the alone tier starts after it. The build
# needs a compiler: where Debian's cmake or g++ is missing, the packages are installed first.
if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
    bash scripts/install-test-deps.sh >"$OUT/installs.log" 2>&1
fi
export LLMLOAD_LLAMA_BUILDING="$OUT/llama-building"
touch "$LLMLOAD_LLAMA_BUILDING"
(PIP="${PYTHON:-python3} -m pip" nice -n 19 bash scripts/llama-server.sh
    rm -f "$LLMLOAD_LLAMA_BUILDING") >"$OUT/llama-build.log" 2>&1 &
build=$!
bash scripts/install-test-deps.sh >>"$OUT/installs.log" 2>&1 &
deps=$!
start=$SECONDS
make -s "$VENV/.test" PYTHON="${PYTHON:-python3}" VENV="$VENV" || exit 1
wait $deps || { echo "make test: Debian packages failed ($OUT/installs.log)"; tail -5 "$OUT/installs.log"; }
echo "== make test: venv and Debian packages ready after $((SECONDS - start)) s"

# One canary for the whole run: every judge reads the machine's noise from it.
"$BIN/python" -m tests.support.timing.canary "$LLMLOAD_CANARY_DIR" &
canary=$!
trap 'kill $canary 2>/dev/null; rm -f "$LLMLOAD_CANARY_DIR"/*.bin' EXIT

tier() {
    local name=$1 start=$SECONDS code
    shift
    echo "== make test: $name"
    LLMLOAD_TIMING_TIER=$name "$@"
    code=$?
    [[ $code == 5 ]] && code=0  # pytest: no test selected in this tier (a -k that picks none)
    names+=("$name") seconds+=($((SECONDS - start))) codes+=("$code")
}
pytest() { "$BIN/python" -m pytest -q "${EXTRA[@]}" "$@"; }
# A tier of tests, then its unjudged tests once more, alone (the judge's ledger names them).
judged() {
    local name=$1 again code
    shift
    pytest --junitxml="$OUT/$name.xml" "$@"
    code=$?
    mapfile -t again < <("$BIN/python" -m tests.support.timing.ledger unjudged "$LLMLOAD_TIMING_DIR" "$name")
    if [[ ${#again[@]} -gt 0 ]]; then
        echo "== make test: $name: ${#again[@]} unjudged, run once more"
        LLMLOAD_TIMING_ATTEMPT=2 pytest -n 0 --junitxml="$OUT/$name-again.xml" "${again[@]}" || code=1
    fi
    return "$code"
}
lint() {
    "$BIN/ruff" format --check src tests bench locustfiles && "$BIN/ruff" check src tests bench locustfiles
}

tier lint lint
tier types "$BIN/mypy" src
tier unit judged unit -n 2 tests/unit
tier waiting judged waiting -n "$WORKERS" --dist loadgroup -m "not timing and not alone" "${TIERS[@]/#/tests/}"
start=$SECONDS
wait $build
echo "== make test: llama-server: $(grep -h 'built llama-server' "$OUT/llama-build.log" || echo 'cached'), waited $((SECONDS - start)) s more"
tier alone judged alone -m "timing or alone" "${TIERS[@]/#/tests/}"
tier proof judged proof tests/proof

"$BIN/python" -m tests.support.testrun "$OUT" "${names[@]}" -- "${seconds[@]}" -- "${codes[@]}"
code=$?
"$BIN/python" -m tests.support.timing.ledger summary "$LLMLOAD_TIMING_DIR" || code=1
echo "make test: output in $OUT"
exit "$code"
