"""Client timing against the simulator's ground truth, per request and per event.

Every client process writes the same shape (``requests``: ``id`` of the response, ``st_ns``
when it started the request, ``ttft_ns`` as that client reports TTFT, ``read_ns`` its stamp of
each token event, ``sent_ns`` the simulator's stamp of the same event) and its measured
``window_ns``. Both clocks are ``perf_counter_ns`` on one host, so they compare directly.

- added TTFT error = client TTFT - simulator TTFT (``first_token_ns - arrival_ns`` of the same
  request in ``/sim/requests``, matched by the response id the client saw);
- per-event lag = client stamp - simulator send stamp; ITL error = the difference of
  consecutive lags (how much a client-measured gap differs from the gap the server wrote).

Only requests started inside the window and finished count: the first wave of a closed loop
(every stream starts at once) is warm-up.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from harness.stats import summary_ms


def analyze(result: dict[str, Any], truth: list[dict[str, Any]], ttft_ms: float) -> dict[str, Any]:
    by_id = {t["id"]: t for t in truth}
    t0, t1 = result["window_ns"]
    ttft_err: list[int] = []
    nominal_err: list[int] = []  # client TTFT - configured TTFT, the vLLM study's error
    itl_err: list[int] = []
    lags: list[int] = []
    client_gaps: list[int] = []
    unmatched = 0
    for q in result["requests"]:
        if not q["ok"] or not t0 <= q["st_ns"] < t1:
            continue
        sim = by_id.get(q["id"])
        reads, sent = q["read_ns"], q["sent_ns"]
        if sim is None or len(reads) != len(sent) or sim["first_token_ns"] != sent[0]:
            unmatched += 1
            continue
        ttft_err.append(q["ttft_ns"] - (sim["first_token_ns"] - sim["arrival_ns"]))
        nominal_err.append(q["ttft_ns"] - round(ttft_ms * 1e6))
        lag = [r - s for r, s in zip(reads, sent, strict=True)]
        lags.extend(lag)
        itl_err.extend(b - a for a, b in pairwise(lag))
        client_gaps.extend(b - a for a, b in pairwise(reads))
    measure_s = (t1 - t0) / 1e9
    return {
        "requests": len(ttft_err),
        "unmatched": unmatched,
        "ttft_error": summary_ms(ttft_err),
        "ttft_error_vs_nominal": summary_ms(nominal_err),
        "itl_error": summary_ms([abs(e) for e in itl_err]),
        "itl_error_signed_p50_ms": summary_ms(itl_err)["p50_ms"],
        "event_lag": summary_ms(lags),
        "client_itl": summary_ms(client_gaps),
        "cpu_share": round(result["cpu_window_s"] / measure_s, 3),
    }
