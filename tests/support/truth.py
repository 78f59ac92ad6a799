"""Ground truth for distributed runs: recompute from raw records and the simulator's log.

- ``rebuild``: a ``RequestRecord`` from its ``requests-*.jsonl`` line, so the metrics are
  derived by the same functions the workers use, from the raw stamps alone;
- ``recomputed``: TTFT and per-token ITL over a set of records, both as a ``LogHistogram`` (what
  the master's merge must equal exactly) and as sorted raw values (exact nearest-rank);
- ``request_total``: every request a summary accounts for, in any phase or outcome;
- ``wait_sim_settled``: bounded wait until the simulator has logged every request it received.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord, TokenSource
from llmload.metrics import derive
from llmload.metrics.histogram import LogHistogram, nearest_rank


def rebuild(d: dict[str, Any]) -> RequestRecord:
    return RequestRecord(
        request_id=d["id"],
        user=d["user"],
        stage=d["stage"],
        phase=Phase(d["phase"]),
        endpoint=d["endpoint"],
        stream=d["stream"],
        scheduled_ns=d["scheduled_ns"],
        prompt_tokens_requested=d["prompt_tokens_requested"],
        max_tokens=d["max_tokens"],
        connect_start_ns=d["connect_start_ns"],
        connected_ns=d["connected_ns"],
        sent_ns=d["sent_ns"],
        headers_ns=d["headers_ns"],
        first_token_ns=d["first_token_ns"],
        first_output_ns=d["first_output_ns"],
        last_token_ns=d["last_token_ns"],
        done_ns=d["done_ns"],
        status=d["status"],
        outcome=d["outcome"],
        error_detail=d["error"],
        finish_reason=d["finish_reason"],
        output_tokens=d["output_tokens"],
        reasoning_tokens=d.get("reasoning_tokens", 0),
        prompt_tokens=d["prompt_tokens"],
        token_source=TokenSource(d["token_source"]),
        events=d["events"],
        reads=d["reads"],
        event_ns=array("q", d["event_ns"]),
        event_tokens=array("l", d["event_tokens"]),
    )


@dataclass
class Metric:
    hist: LogHistogram = field(default_factory=LogHistogram)
    values: list[int] = field(default_factory=list)

    def add(self, value: int, n: int = 1) -> None:
        self.hist.add_many(value, n)
        self.values.extend([value] * n)

    def exact_ms(self, q: float) -> float:
        ordered = sorted(self.values)
        return ordered[nearest_rank(q, len(ordered)) - 1] / 1e6

    def hist_ms(self, q: float) -> float:
        return (self.hist.quantile(q) or 0) / 1e6


def recomputed(records: Iterable[dict[str, Any]]) -> dict[str, Metric]:
    """TTFT and ITL of the measured, successful requests, as the summary defines them."""
    out = {"ttft": Metric(), "itl": Metric()}
    for d in records:
        if d["phase"] != "measure" or d["outcome"] != "ok":
            continue
        r = rebuild(d)
        ttft = derive.ttft_ns(r)
        if ttft is not None:
            out["ttft"].add(ttft)
        for gap, tokens in derive.itl_samples(r):
            out["itl"].add(gap, tokens)
    return out


def check_quantiles(stage: dict[str, Any], truth: dict[str, Metric]) -> list[str]:
    """p50/p99 of TTFT and ITL: equal to the recomputed histogram's (the summary rounds to
    0.1 µs) and within one bucket width (2%) of the exact nearest-rank sample."""
    problems = []
    for key, metric in truth.items():
        reported = stage[f"{key}_ms"]
        if reported["count"] != len(metric.values):
            problems.append(f"{key} count {reported['count']} != {len(metric.values)}")
        for name, q in (("p50", 0.5), ("p99", 0.99)):
            got, hist, exact = reported[name], metric.hist_ms(q), metric.exact_ms(q)
            if abs(got - hist) > 1e-4 or abs(got - exact) > 0.02 * exact + 1e-4:
                problems.append(
                    f"{key} {name}: summary {got} ms, merged records {hist:.4f}, exact {exact:.4f}"
                )
    return problems


def request_total(summary: dict[str, Any]) -> int:
    return sum(sum(stage["requests"].values()) for stage in summary["stages"])


class SimLike(Protocol):
    def counters(self) -> dict[str, int]: ...
    def requests(self) -> list[dict[str, Any]]: ...


def wait_sim_settled(sim: SimLike, timeout_s: float = 15.0) -> list[dict[str, Any]]:
    """The simulator's request log once nothing runs or waits and every request is logged."""
    deadline = time.monotonic() + timeout_s
    while True:
        c = sim.counters()
        logged = sim.requests()
        if (
            c["running"] == 0 and c["waiting"] == 0 and len(logged) == c["requests_total"]
        ) or time.monotonic() > deadline:
            return logged
        time.sleep(0.2)
