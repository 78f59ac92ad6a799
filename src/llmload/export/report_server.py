"""The report's sections on what the server said of each request, and where the time before the
first token went: llama.cpp's timings and vLLM's metrics joined to the client's records, and
the HTTP phases."""

from __future__ import annotations

from collections.abc import Sequence

from llmload.export import html as h
from llmload.results.summary import Summary
from llmload.results.summary_stage import Latency

Cells = Sequence[tuple[Latency | None, int]]  # (a latency, its decimals): p50 and p99 cells each


def server_truth_sections(summary: Summary) -> list[str]:
    return [*_llamacpp(summary), *_vllm(summary), *_http_phases(summary)]


def _cells(pairs: Cells) -> list[str]:
    return [
        h.fmt(None if m is None else m.quantile(q), digits) for m, digits in pairs for q in ("p50", "p99")
    ]


def _p50_p99(*names: str) -> list[str]:
    return [part for name in names for part in (f"{name} p50", "p99")]


def _llamacpp(summary: Summary) -> list[str]:
    body = []
    for stage in summary.stages:
        t = stage.server_timings
        if t is None:
            continue
        cells = [h.fmt(stage.index, 0), h.fmt(t.requests, 0), h.fmt(t.cached_prompt_tokens, 0)]
        cells += _cells(
            (
                (stage.ttft_ms, 1),
                (t.prefill_ms, 1),
                (t.ttft_minus_prefill_ms, 2),
                (t.decode_per_token_ms, 2),
                (t.decode_minus_predicted_ms, 2),
                (t.tpot_minus_server_ms, 3),
            )
        )
        body.append(cells)
    if not body:
        return []
    headers = ["stage", "requests", "cached prompt tokens"]
    headers += _p50_p99("client TTFT", "server prefill", "TTFT - prefill", "server ms/token")
    headers += _p50_p99("decode span - server", "TPOT - server")
    return [
        h.heading("Client minus server"),
        h.paragraph(
            "The server's own timings of each request (llama.cpp's timings), joined to the "
            "client's record of the same request; differences per request, in ms. TTFT - prefill "
            "is what lies outside the server's prompt evaluation: waiting for a slot, the "
            "network, the client.",
            "note",
        ),
        h.table(headers, body, left=1, css="wide"),
    ]


def _vllm(summary: Summary) -> list[str]:
    body = []
    for stage in summary.stages:
        m = stage.server_metrics
        if m is None:
            continue
        share = None if m.queue_share_of_ttft is None else 100 * m.queue_share_of_ttft
        cells = [h.fmt(stage.index, 0), h.fmt(m.requests, 0)]
        cells += _cells(((stage.ttft_ms, 1), (m.queue_ms, 1), (m.engine_ttft_ms, 1)))
        cells.append(h.fmt(share, 0))
        cells += _cells(
            (
                (m.ttft_outside_engine_ms, 2),
                (stage.tpot_ms, 2),
                (m.mean_itl_ms, 2),
                (m.tpot_minus_mean_itl_ms, 3),
            )
        )
        body.append(cells)
    if not body:
        return []
    headers = ["stage", "requests", *_p50_p99("client TTFT", "server queue", "engine TTFT")]
    headers += ["queue % of TTFT"]
    headers += _p50_p99("TTFT - queue - engine", "client TPOT", "server mean ITL", "TPOT - mean ITL")
    return [
        h.heading("Client minus server (vLLM)"),
        h.paragraph(
            "vLLM's own metrics of each request (--enable-per-request-metrics), joined to the "
            "client's record of the same request, in ms. Its TTFT starts when the request is "
            "first scheduled into a batch, so the queue before it is reported apart: the queue's "
            "share says how much of TTFT was waiting for a place in the batch, and TTFT - queue - "
            "engine TTFT is what lies outside the engine (HTTP, tokenization, network, client).",
            "note",
        ),
        h.table(headers, body, left=1, css="wide"),
    ]


def _http_phases(summary: Summary) -> list[str]:
    body = []
    for stage in summary.stages:
        p = stage.http_phases
        if p is None:
            continue
        cells = [h.fmt(stage.index, 0), h.fmt(p.requests, 0), h.fmt(p.new_connections, 0)]
        cells += _cells(
            (
                (p.pool_wait_ms, 3),
                (p.tcp_connect_ms, 3),
                (p.tls_ms, 2),
                (p.request_write_ms, 3),
                (p.first_byte_ms, 2),
                (p.first_token_ms, 1),
            )
        )
        body.append(cells)
    if not body:
        return []
    headers = ["stage", "requests", "new connections"]
    headers += _p50_p99("pool wait", "TCP connect", "TLS", "request write", "first byte", "first token")
    return [
        h.heading("HTTP phases"),
        h.paragraph(
            "Where each successful request's time went before its first token, in ms: the wait "
            "for a connection, a new connection's TCP connect and TLS handshake (before TTFT "
            "starts), then the request written, the server's first byte and the first token "
            "(which add up to TTFT). Blank: not seen (a kept-alive connection has no connect).",
            "note",
        ),
        h.table(headers, body, left=1, css="wide"),
    ]
