"""Ground truth and protocol details: what the simulator says it wrote is what a client read."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from llmload.sim.process import SimProcess, start_sim
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat
from tests.support.wire import chat_body, connect, exchange, read_response, request_bytes

pytestmark = [pytest.mark.integration]

CHAT = "/v1/chat/completions"


def _content_tokens(chunks: list[dict[str, object]]) -> list[int]:
    out = []
    for chunk in chunks:
        for choice in chunk["choices"]:  # type: ignore[attr-defined]
            text = choice.get("delta", {}).get("content") or choice.get("text") or ""
            if text:
                out.append(len(text.split()))
    return out


def test_keep_alive_and_pipelining_reuse_one_connection(fast_sim: SimProcess) -> None:
    before = fast_sim.counters()["connections_total"]
    with connect(fast_sim.port) as sock:
        for _ in range(3):
            sock.sendall(request_bytes(CHAT, chat_body(3)))
            assert read_response(sock).complete
        sock.sendall(request_bytes(CHAT, chat_body(2)) + request_bytes(CHAT, chat_body(2, stream=False)))
        first, second = read_response(sock), read_response(sock)
    after = fast_sim.counters()["connections_total"]
    assert first.complete and second.complete
    assert json.loads(second.body)["usage"]["completion_tokens"] == 2
    assert after - before == 2  # the probe's connection and this counters call's own


def test_request_log_matches_endpoint_and_client(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    with start_sim(["--ttft-ms", "3", "--step-ms", "2", "--request-log", str(log)]) as sim:
        responses = [exchange(sim.port, CHAT, chat_body(5 + i)) for i in range(4)]
        entries = sim.requests()
        counters = sim.counters()
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(logged, key=lambda e: e["arrival_ns"]) == entries
    assert [e["id"] for e in entries] == [r.chunks()[0]["id"] for r in responses]
    for entry, response in zip(entries, responses, strict=True):
        assert entry["completion_tokens"] == sum(_content_tokens(response.chunks()))
        assert entry["events"] == len(_content_tokens(response.chunks()))
        assert entry["arrival_ns"] < entry["first_token_ns"] < entry["done_ns"]  # not timing: causal order
        assert entry["client"].startswith("127.0.0.1:")
        assert (entry["outcome"], entry["finish_reason"], entry["stream"]) == ("ok", "length", True)
    assert counters["tokens_written_total"] == sum(e["completion_tokens"] for e in entries)
    assert counters["requests_total"] == 4


@pytest.mark.timing
def test_client_going_away_is_cancelled_with_its_tokens(fast_sim: SimProcess, judge: Judge) -> None:
    judge.during(sent_ns := time.perf_counter_ns())
    with connect(fast_sim.port) as sock:
        sock.sendall(request_bytes(CHAT, chat_body(400)))
        seen = b""
        while seen.count(b'"content":" ') < 3:
            seen += sock.recv(65536)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    reset_ns = time.perf_counter_ns()  # closed: the reset is on its way
    deadline = time.monotonic() + 5  # the simulator logs a request once it ends
    while not (ours := [e for e in fast_sim.requests() if e["arrival_ns"] > sent_ns]):
        assert time.monotonic() < deadline, "the reset request was never logged"  # not timing: a bounded wait
        time.sleep(0.01)
    (entry,) = ours
    assert entry["outcome"] == "cancelled"
    # The simulator reads the reset on its loop at once and stops (its own work: 0.5 ms here),
    # where the 400 tokens it was asked for would take two seconds.
    judge.server(fast_sim.stats(sent_ns))
    judge.at_most((entry["done_ns"] - reset_ns) / 1e6, 2, Stat.EVERY, "the reset request closed")
    assert entry["completion_tokens"] >= 3
    assert fast_sim.counters()["running"] == 0


def test_timeline_counts_tokens_at_every_step(fast_sim: SimProcess) -> None:
    start = fast_sim.counters()
    exchange(fast_sim.port, CHAT, chat_body(6))
    points = fast_sim.timeline(since_ns=start["now_ns"])
    totals = [n for _, n in points]
    assert totals == sorted(totals)
    assert totals[-1] - start["tokens_written_total"] == 6
    assert [t for t, _ in points] == sorted(t for t, _ in points)


def test_tokens_per_chunk_and_continuous_usage(sim_factory: object) -> None:
    sim = sim_factory("--ttft-ms", "2", "--step-ms", "2", "--tokens-per-chunk", "4")  # type: ignore[operator]
    body = chat_body(10, stream_options={"include_usage": True, "continuous_usage_stats": True})
    chunks = exchange(sim.port, CHAT, body).chunks()
    assert _content_tokens(chunks) == [1, 4, 4, 1]
    usages = [c["usage"]["completion_tokens"] for c in chunks]
    assert usages == [0, 1, 5, 9, 10, 10]  # role chunk, 4 token events, the usage chunk
    metrics = exchange(sim.port, "/metrics").body.decode()
    assert "vllm:spec_decode_num_drafts_total" in metrics
    draft_line = next(ln for ln in metrics.splitlines() if ln.startswith("vllm:spec_decode_num_drafts"))
    assert draft_line.endswith(" 3.0")


def test_no_timestamps_unless_asked(fast_sim: SimProcess) -> None:
    assert b"llmload_sim" not in exchange(fast_sim.port, CHAT, chat_body(3)).body


def test_same_seed_same_answers(sim_factory: object) -> None:
    def texts(seed: str) -> list[str]:
        sim = sim_factory("--ttft-ms", "1", "--step-ms", "1", "--seed", seed)  # type: ignore[operator]
        out = []
        for i in range(5):
            body = chat_body(
                30, stream=False, ignore_eos=False, messages=[{"role": "user", "content": f"q {i}"}]
            )
            message = json.loads(exchange(sim.port, CHAT, body).body)["choices"][0]["message"]
            out.append(message["content"])
        return out

    assert texts("1") == texts("1")
    assert texts("1") != texts("2")


def test_http_details(fast_sim: SimProcess) -> None:
    assert exchange(fast_sim.port, "/nope").status == 404
    assert exchange(fast_sim.port, CHAT, method="GET").status == 405
    assert exchange(fast_sim.port, CHAT, chat_body(2, min_tokens=5)).status == 400
    with connect(fast_sim.port) as sock:
        sock.sendall(b"GET /health HTTP/1.0\r\n\r\n")
        response = read_response(sock)
        assert response.status == 200
        assert sock.recv(10) == b"", "HTTP/1.0 without keep-alive closes"
    with connect(fast_sim.port) as sock:
        body = json.dumps(chat_body(2, stream=False)).encode()
        head = f"POST {CHAT} HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: {len(body)}\r\n\r\n"
        sock.sendall(head.encode())
        assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(body)
        assert read_response(sock).status == 200


def test_tls(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    certfile, keyfile = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(certfile))
    cert.private_key_pem.write_to_path(str(keyfile))
    with start_sim(["--certfile", str(certfile), "--keyfile", str(keyfile)]) as sim:
        assert sim.url.startswith("https://127.0.0.1:")
        assert sim.get("/health")[0] == 200
        assert sim.counters()["connections_total"] == 2


def _phases(chunks: list[dict[str, object]]) -> list[tuple[str, int]]:
    """Each token event as (its delta field, its words)."""
    out = []
    for chunk in chunks:
        for choice in chunk["choices"]:  # type: ignore[attr-defined]
            for key in ("reasoning_content", "content"):
                text = choice.get("delta", {}).get(key)
                if text:
                    out.append((key, len(text.split())))
    return out


def test_reasoning_streams_thinking_first_and_counts_it_in_usage() -> None:
    args = ["--ttft-ms", "3", "--step-ms", "2", "--reasoning-tokens", "3", "--tokens-per-chunk", "3"]
    usage = {"stream_options": {"include_usage": True}}
    with start_sim(args) as sim:
        streamed = exchange(sim.port, CHAT, chat_body(9, **usage)).chunks()
        whole = json.loads(exchange(sim.port, CHAT, chat_body(9, stream=False)).body)
        cut = exchange(sim.port, CHAT, chat_body(3, **usage)).chunks()
        entries = sim.requests()
    # 1 token, then 3 per event: the second event spans both phases and is written as two
    thinking, answer = "reasoning_content", "content"
    assert _phases(streamed) == [(thinking, 1), (thinking, 2), (answer, 1), (answer, 3), (answer, 2)]
    assert streamed[-1]["usage"]["completion_tokens_details"] == {"reasoning_tokens": 3}
    message = whole["choices"][0]["message"]
    assert len(message["reasoning_content"].split()) == 3 and len(message["content"].split()) == 6
    assert whole["usage"]["completion_tokens"] == 9
    assert whole["usage"]["completion_tokens_details"] == {"reasoning_tokens": 3}
    # a budget the thinking takes whole: no answer
    assert {key for key, _ in _phases(cut)} == {"reasoning_content"}
    assert cut[-1]["usage"]["completion_tokens_details"] == {"reasoning_tokens": 3}
    first, second, third = entries
    assert (first["reasoning_tokens"], first["completion_tokens"], first["events"]) == (3, 9, 5)
    assert first["first_token_ns"] < first["first_answer_ns"] < first["done_ns"]  # not timing: causal
    assert second["first_answer_ns"] == second["first_token_ns"]  # one body, one write
    assert (third["reasoning_tokens"], third["first_answer_ns"]) == (3, None)
