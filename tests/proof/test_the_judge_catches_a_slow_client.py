"""Proof that the timing judge still fails: a client 3 ms slower at reading is caught.

The tests below claim that llmload's client adds well under a millisecond to what it measures,
or that its per-request stamps agree with the server's. They run here once more, in a child
pytest, with every read of the lean transport taken 3 ms after its bytes arrived
(``inject/sitecustomize.py``: a timer on the event loop, so the client's own loop lag cannot
see it). Each must then fail, on a judgement of its own (read back from the child's ledger);
in the alone tier the same tests pass without the delay.

Which claims cannot see a uniform 3 ms, and why, is said beside ``BLIND``: a delay that moves
both ends of a span cancels in the span.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.timing import ledger
from tests.support.timing.judge import UNJUDGED, Judge

REPO = Path(__file__).resolve().parents[2]
INJECT = Path(__file__).resolve().parent / "inject"
DELAY_MS = 3

# Claims of what the client adds to the server's own account, at the median: 3 ms is ten times
# their base, so each must fail.
CAUGHT = {
    "tests/e2e/test_chat_ground_truth.py::test_fixed_timing_streams_match_ground_truth": (
        "client TTFT over the server's, median"
    ),
    "tests/e2e/test_server_truth.py::test_vllm_metrics_join_the_client_record_as_the_simulator_timed_them": (
        "client TTFT outside the engine's account, median"
    ),
    # the paired claim: against a bare client on the same simulator, interleaved
    "tests/e2e/test_client_overhead.py::"
    "test_llmload_reads_a_first_token_within_a_fraction_of_a_millisecond_of_a_bare_client": (
        "llmload's first-token read over a bare client's"
    ),
}
# Claims a uniform delay cannot move: the gap between two reads of one stream, each 3 ms late.
BLIND = {
    "tests/e2e/test_chat_ground_truth.py::test_speculative_chunks_split_itl_per_token": "ITL and TPOT",
}


@pytest.mark.timeout(600)
def test_a_client_3_ms_slower_at_reading_fails_the_sub_millisecond_claims(
    tmp_path: Path, judge: Judge
) -> None:
    env = {
        **os.environ,
        "LLMLOAD_INJECT_READ_DELAY_MS": str(DELAY_MS),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(INJECT), str(REPO), os.environ.get("PYTHONPATH")])),
        ledger.DIR_ENV: str(tmp_path / "timing"),
        ledger.TIER_ENV: "proof-injected",
        "CI": "",  # the child reports; this test decides
    }
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", *CAUGHT, *BLIND],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    print(proc.stdout[-6000:])
    outcomes: dict[str, dict[str, str]] = defaultdict(dict)
    for line in ledger.read(tmp_path / "timing"):
        outcomes[line["test"]][line["what"]] = line["outcome"]
    for test, what in BLIND.items():
        print(f"blind to a uniform delay ({what}): {test}: {sorted(set(outcomes[test].values()))}")
    caught = {test: outcomes[test].get(what) for test, what in CAUGHT.items()}
    print(f"with {DELAY_MS} ms injected: {caught}")
    unjudged = [test for test, outcome in caught.items() if outcome == "unjudged"]
    if unjudged:
        pytest.skip(f"{UNJUDGED}the machine was noisier than the claims the delay must fail: {unjudged}")
    judge.exactly(
        sum(outcome == "fail" for outcome in caught.values()),
        len(CAUGHT),
        len(CAUGHT),
        "claims that caught 3 ms",
    )
    assert proc.returncode == 1, proc.stdout[-3000:]
