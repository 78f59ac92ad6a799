"""A connection per request is said when it costs a visible share of TTFT, and only then."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from llmload.export.rundata import read_summary
from llmload.results.build import connection_warning
from llmload.results.summary_stage import HttpPhasesSummary, Latency, Stage

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def _ms(p50: float) -> Latency:
    return Latency(count=10, mean=p50, min=p50, max=p50, p50=p50, p90=p50, p95=p50, p99=p50, p999=p50)


def _stage(new: int, tcp: float, tls: float | None, ttft: float) -> Stage:
    stage = read_summary(FIXTURES / "engine-a").stages[0]
    phases = HttpPhasesSummary(
        requests=10, new_connections=new, pool_wait_ms=_ms(0.01), tcp_connect_ms=_ms(tcp),
        tls_ms=None if tls is None else _ms(tls), request_write_ms=_ms(0.02), first_byte_ms=_ms(0.1),
        first_token_ms=_ms(ttft),
    )  # fmt: skip
    return replace(stage, http_phases=phases, ttft_ms=_ms(ttft))


def test_a_handshake_per_request_beside_a_short_ttft_is_said_with_its_figures() -> None:
    warning = connection_warning(_stage(new=10, tcp=0.2, tls=3.0, ttft=20.0))
    assert warning is not None
    assert "100% of requests" in warning and "TLS 3.00 ms" in warning and "20.0 ms" in warning


@pytest.mark.parametrize(
    ("new", "tcp", "tls", "ttft"),
    [
        (10, 0.1, None, 500.0),  # a connection per request, but loopback TCP beside a long TTFT
        (2, 0.2, 3.0, 20.0),  # the handshakes of the first requests only: keep-alive works
    ],
)
def test_what_costs_little_or_happens_once_is_not(
    new: int, tcp: float, tls: float | None, ttft: float
) -> None:
    assert connection_warning(_stage(new, tcp, tls, ttft)) is None
