#!/usr/bin/env bash
# `make test` after the installs: lint, types, then the test tiers, each timed, with every
# tier's time and the totals printed at the end (and an exit code that fails on any tier).
#
#   unit     no sockets, CPU-bound: one xdist worker per core
#   waiting  integration, e2e, k8s and bench tests that mostly wait on wall-clock windows (a
#            locust run's -t, a server's start): run side by side, $LLMLOAD_TEST_WORKERS at once
#   alone    the tests marked `timing` (they compare a client's stamps with ground truth, or
#            drive a CPU-bound server): one at a time, on a machine the other tiers have left
#
# Pass pytest arguments through TESTS_ARGS, e.g. TESTS_ARGS="-k llama" make test.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"
WORKERS="${LLMLOAD_TEST_WORKERS:-4}"
OUT="$(mktemp -d)"
TIERS=(integration e2e k8s bench)
# shellcheck disable=SC2206
EXTRA=(${TESTS_ARGS:-})
names=() seconds=() codes=()

tier() {
    local name=$1 start=$SECONDS code
    shift
    echo "== make test: $name"
    "$@"
    code=$?
    [[ $code == 5 ]] && code=0  # pytest: no test selected in this tier (a -k that picks none)
    names+=("$name") seconds+=($((SECONDS - start))) codes+=("$code")
}
pytest() { "$BIN/python" -m pytest -q "${EXTRA[@]}" "$@"; }
lint() {
    "$BIN/ruff" format --check src tests bench locustfiles && "$BIN/ruff" check src tests bench locustfiles
}

tier lint lint
tier types "$BIN/mypy" src
tier unit pytest -n 2 --junitxml="$OUT/unit.xml" tests/unit
tier waiting pytest -n "$WORKERS" --dist loadgroup -m "not timing" --durations=10 \
    --junitxml="$OUT/waiting.xml" "${TIERS[@]/#/tests/}"
tier alone pytest -m timing --durations=30 --junitxml="$OUT/alone.xml" "${TIERS[@]/#/tests/}"

"$BIN/python" - "$OUT" "${names[@]}" -- "${seconds[@]}" -- "${codes[@]}" <<'PY'
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

out, rest = Path(sys.argv[1]), sys.argv[2:]
split = [i for i, a in enumerate(rest) if a == "--"]
names, secs, codes = rest[: split[0]], rest[split[0] + 1 : split[1]], rest[split[1] + 1 :]
totals = {"passed": 0, "failed": 0, "skipped": 0}
print("\nmake test: tier times")
for name, s, code in zip(names, secs, codes):
    counts = ""
    xml = out / f"{name}.xml"
    if xml.exists():
        suite = ET.parse(xml).getroot()
        suite = suite if suite.tag == "testsuite" else suite[0]
        tests, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        totals["passed"] += tests - skipped - failed
        totals["failed"] += failed
        totals["skipped"] += skipped
        counts = f"  {tests - skipped - failed} passed, {failed} failed, {skipped} skipped"
    print(f"  {name:<8} {int(s) // 60:3d} min {int(s) % 60:02d} s  {'ok' if code == '0' else 'FAILED'}{counts}")
print(f"tests: {totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
PY

for code in "${codes[@]}"; do
    [[ $code == 0 ]] || exit 1
done
