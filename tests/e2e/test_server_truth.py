"""The server's own account of each request, joined to the client's by request id, against the
simulator's ground truth: vLLM's per-request metrics, cached tokens, the trace context sent, and
the HTTP phases over plain and TLS connections."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import trustme

from llmload.results.build import UNANSWERED_METRICS
from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

MS = 1e6
PHASE_ORDER = (
    "began_ns",
    "connect_start_ns",
    "tls_start_ns",
    "connected_ns",
    "sent_ns",
    "written_ns",
    "first_byte_ns",
    "first_token_ns",
    "done_ns",
)


def _joined(
    records: list[dict[str, Any]], served: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    by_id = {entry["client_request_id"]: entry for entry in served}
    return [(r, by_id[r["id"]]) for r in records if r["outcome"] == "ok"]


@pytest.mark.timing
def test_vllm_metrics_join_the_client_record_as_the_simulator_timed_them(
    run_locust: RunLocust, judge: Judge
) -> None:
    sim_args = ["--profile", "vllm", "--enable-per-request-metrics"]
    # 32 streams on 16 prompt groups of a 512-token prefix: requests queue for the batch's
    # steps and find their group's prefix cached, so both joins have something to show.
    with start_sim(sim_args) as sim:
        run = run_locust(
            sim.url,
            *("--max-tokens", "48", "--prefix-groups", "16", "--prefix-tokens", "512"),
            users=32,
            run_time="12s",
        )
        served = sim.requests()
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    joined = _joined(run.records, served)
    assert len(joined) > 100  # not timing: 32 streams of 48 tokens answer ~2,000 in 12 s
    outside = []
    for record, entry in joined:
        metrics = record["server_metrics"]
        assert metrics is not None, record["id"]
        # the server's queue is the simulator's own: arrival to its first admission
        queue_truth = (entry["scheduled_ns"] - entry["arrival_ns"]) / MS
        # not timing: the same two stamps of the simulator's, rounded to the ms in its metrics
        assert metrics["queue_time_ms"] == pytest.approx(queue_truth, abs=0.5)
        # the client's clock starts before the server's and stops after it: never less
        ttft = (record["first_token_ns"] - record["sent_ns"]) / MS
        engine = metrics["queue_time_ms"] + metrics["time_to_first_token_ms"]
        assert ttft - engine >= 0, (record["id"], ttft, metrics)
        if record["phase"] == "measure":  # the stage's table is of its window's requests
            outside.append(ttft - engine)
        assert record["cached_tokens"] == entry["cached_tokens"]
        assert entry["traceparent"] == f"00-{record['trace_id']}-{entry['traceparent'][36:52]}-01"
    outside.sort()
    # what lies outside the engine is the trip and the client's read lateness: the same bound as
    # the client's TTFT against the simulator's (test_chat_ground_truth)
    p50 = outside[len(outside) // 2]
    judge.at_most(p50, 1.0, Stat.MEDIAN, "client TTFT outside the engine's account, median")
    assert len({r["trace_id"] for r, _ in joined}) == len(joined)
    assert all(re.fullmatch(r"[0-9a-f]{32}", r["trace_id"]) for r, _ in joined)

    table = stage["server_metrics"]
    assert table["requests"] == stage["requests"]["ok"]
    assert table["queue_ms"]["max"] > 0  # the batch made some wait
    assert 0 < table["queue_share_of_ttft"] < 1
    # not timing: the table's quantile is its histogram's (1%) and its rank the nearest, one sample apart
    assert table["ttft_outside_engine_ms"]["p50"] == pytest.approx(p50, abs=0.05 + p50 * 0.1)
    # TPOT and the mean ITL are the same tokens' time two ways: late reads move the median apart
    judge.close(table["tpot_minus_mean_itl_ms"]["p50"], 0, 0.5, Stat.MEDIAN, "TPOT - mean ITL, p50")
    assert sum(r["cached_tokens"] for r, _ in joined) > 0
    assert "server's own metrics" in run.output and "client minus server" in run.output
    assert UNANSWERED_METRICS not in run.summary["warnings"]


def test_a_vllm_without_the_flag_is_asked_and_said_to_need_it(run_locust: RunLocust) -> None:
    with start_sim(
        ["--profile", "vllm", "--no-per-request-metrics", "--ttft-ms", "5", "--step-ms", "2"]
    ) as sim:
        run = run_locust(sim.url, "--max-tokens", "8", users=2, run_time="4s")
        off = run_locust(sim.url, "--max-tokens", "8", "--server-timings", "off", users=2, run_time="4s")
    assert all(r["server_metrics"] is None and r["asked_server_timings"] for r in run.records)
    assert UNANSWERED_METRICS in run.summary["warnings"]
    assert run.summary["stages"][0]["server_metrics"] is None
    assert not any(r["asked_server_timings"] for r in off.records)
    assert UNANSWERED_METRICS not in off.summary["warnings"]


def _tls_sim(tmp_path: Path) -> tuple[list[str], str]:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    certfile, keyfile, ca_file = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(certfile))
    cert.private_key_pem.write_to_path(str(keyfile))
    ca.cert_pem.write_to_path(str(ca_file))
    return ["--certfile", str(certfile), "--keyfile", str(keyfile)], str(ca_file)


def _ordered(record: dict[str, Any]) -> list[int]:
    stamps = [record[name] for name in PHASE_ORDER if record[name] is not None]
    assert stamps == sorted(stamps), record
    return stamps


def test_http_phases_over_tls_with_a_connection_per_request_warn(
    run_locust: RunLocust, tmp_path: Path
) -> None:
    tls, ca_file = _tls_sim(tmp_path)
    fast = ["--ttft-ms", "1", "--step-ms", "1"]
    with start_sim([*tls, *fast]) as sim:
        closing = run_locust(
            sim.url, "--ca-file", ca_file, "--max-tokens", "4", "--extra-header", "Connection: close",
            users=2, run_time="5s",
        )  # fmt: skip
        kept = run_locust(sim.url, "--ca-file", ca_file, "--max-tokens", "4", users=2, run_time="5s")
    ok = [r for r in closing.records if r["outcome"] == "ok"]
    assert ok
    for r in ok:
        stamps = _ordered(r)
        # not timing: one request's stamps in causal order, on one clock
        assert r["connect_start_ns"] < r["tls_start_ns"] < r["connected_ns"] <= r["sent_ns"]
        # not timing: the phases partition the time from the hand-over to the first token
        assert (
            stamps[-1] == r["done_ns"] and r["first_token_ns"] - r["began_ns"] <= r["done_ns"] - r["began_ns"]
        )
    phases = closing.summary["stages"][0]["http_phases"]
    assert phases["new_connections"] == phases["requests"]
    assert phases["tls_ms"] is not None and phases["tcp_connect_ms"] is not None
    warning = next(w for w in closing.summary["stages"][0]["warnings"] if "connection of their own" in w)
    assert "TLS" in warning and "Connection: close" in warning

    kept_stage = kept.summary["stages"][0]
    assert kept_stage["http_phases"]["new_connections"] < kept_stage["http_phases"]["requests"]
    assert not any("connection of their own" in w for w in kept_stage["warnings"])
    for r in kept.records:
        if r["outcome"] == "ok":
            _ordered(r)


def test_http_phases_over_plain_http_leave_tls_out(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2"]) as sim:
        run = run_locust(
            sim.url, "--max-tokens", "8", "--extra-header", "Connection: close", users=2, run_time="4s"
        )
    ok = [r for r in run.records if r["outcome"] == "ok"]
    assert ok and all(r["tls_start_ns"] is None and r["connect_start_ns"] is not None for r in ok)
    for r in ok:
        _ordered(r)
    phases = run.summary["stages"][0]["http_phases"]
    assert phases["tls_ms"] is None and phases["tcp_connect_ms"]["count"] == phases["requests"]
    first = (
        phases["request_write_ms"]["p50"] + phases["first_byte_ms"]["p50"] + phases["first_token_ms"]["p50"]
    )
    # not timing: the three phases' medians add up to the TTFT's median to within their spread
    assert first == pytest.approx(run.summary["stages"][0]["ttft_ms"]["p50"], rel=0.2)


def test_the_cache_is_reset_first_and_the_profiler_runs_over_the_stage_asked(run_locust: RunLocust) -> None:
    with start_sim(["--profile", "vllm", "--ttft-ms", "5", "--step-ms", "2"]) as sim:
        run = run_locust(
            sim.url,
            "--max-tokens",
            "8",
            "--reset-prefix-cache",
            "--server-profile",
            "0",
            users=2,
            run_time="5s",
        )
        counters = sim.counters()
    control = run.summary["server"]["control"]
    assert [(c["stage"], c["action"], c["said"]) for c in control] == [
        (None, "reset_prefix_cache", "cache reset: POST /reset_prefix_cache 200"),
        (0, "start_profile", "profiler start: POST /start_profile 200"),
        (0, "stop_profile", "profiler stop: POST /stop_profile 200"),
    ]
    # the profile covers the stage's measured window: started at its start, stopped at its end
    t0, t1 = run.summary["stages"][0]["window_ns"]
    # not timing: the order of the client's window and the server's stamps, on one clock
    assert t0 <= counters["profile_start_ns"] < t1 <= counters["profile_stop_ns"]
    assert "llmload: server: cache reset" in run.output and "server (stage 0): profiler start" in run.output


def test_a_server_that_cannot_is_said_so_and_the_run_goes_on(run_locust: RunLocust) -> None:
    # SGLang's sim has no /reset_prefix_cache but /flush_cache: llmload asks the engine's own
    with start_sim(["--profile", "sglang", "--ttft-ms", "5", "--step-ms", "2"]) as sim:
        run = run_locust(sim.url, "--max-tokens", "8", "--reset-prefix-cache", users=2, run_time="3s")
    (reset,) = run.summary["server"]["control"]
    assert reset["said"] == "cache reset: POST /flush_cache 200"
