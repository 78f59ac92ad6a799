"""The ground-truth arithmetic of bench/accuracy.py, on a hand-made client result."""

from __future__ import annotations

from harness.stats import pct, slope
from harness.truth import analyze

MS = 1_000_000


def test_ttft_and_itl_errors_against_the_simulator() -> None:
    truth = [
        {"id": "a", "arrival_ns": 1_000 * MS, "first_token_ns": 1_050 * MS},
        {"id": "b", "arrival_ns": 2_000 * MS, "first_token_ns": 2_050 * MS},
    ]
    requests = [
        # sent 0.1 ms before the simulator saw it, first token read 2 ms late, then on time
        {
            "id": "a",
            "ok": True,
            "st_ns": 1_000 * MS - MS // 10,
            "ttft_ns": 52 * MS + MS // 10,
            "sent_ns": [1_050 * MS, 1_060 * MS, 1_070 * MS],
            "read_ns": [1_052 * MS, 1_062 * MS, 1_071 * MS],
        },
        # outside the window: warm-up
        {"id": "b", "ok": True, "st_ns": 5 * MS, "ttft_ns": 0, "sent_ns": [], "read_ns": []},
    ]
    result = {"window_ns": [900 * MS, 1_500 * MS], "cpu_window_s": 0.06, "requests": requests}
    a = analyze(result, truth, ttft_ms=50)
    assert a["requests"] == 1 and a["unmatched"] == 0
    assert a["ttft_error"]["p50_ms"] == 2.1  # client 52.1 ms - simulator 50 ms
    assert a["ttft_error_vs_nominal"]["p50_ms"] == 2.1
    assert a["itl_error"]["max_ms"] == 1.0  # lags 2, 2, 1 ms: gaps off by 0 and 1 ms
    assert a["event_lag"]["max_ms"] == 2.0
    assert a["cpu_share"] == 0.1


def test_unmatched_requests_are_counted_not_guessed() -> None:
    result = {
        "window_ns": [0, 10**12],
        "cpu_window_s": 1.0,
        "requests": [{"id": "zz", "ok": True, "st_ns": 1, "ttft_ns": 1, "sent_ns": [5], "read_ns": [6]}],
    }
    assert analyze(result, [], ttft_ms=50)["unmatched"] == 1


def test_nearest_rank_percentile_and_slope() -> None:
    assert pct([5, 1, 4, 2, 3], 0.5) == 3
    assert pct([1, 2], 0.5) == 1  # the lower sample at a tie
    assert pct([], 0.5) is None
    b, se = slope([0, 1, 2, 3, 4], [1, 3, 5, 7, 9])
    assert b == 2 and se == 0
