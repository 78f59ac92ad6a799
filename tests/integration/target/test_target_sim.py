"""``llmload.target`` against the real simulator: startup delay, hang, fingerprint, /metrics."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from llmload import cli
from llmload.sim.process import start_sim
from llmload.target.fingerprint import fingerprint, warnings
from llmload.target.scrape import Scraper, summarize
from llmload.target.wait import WaitCode, wait_ready
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.integration

DELAY_S = 30.0  # the case: a server that takes half a minute to load
STALL_S = 3.0


def test_wait_reports_loading_then_ready_once_generation_works(tmp_path: Path, judge: Judge) -> None:
    log = tmp_path / "server.log"
    out = io.StringIO()
    began = time.monotonic()  # the simulator's delay starts after this, in its own process
    with start_sim(["--startup-delay-s", str(DELAY_S), "--log-file", str(log)]) as sim:
        started_s = time.monotonic() - began
        result = wait_ready(
            sim.url, timeout_s=60, log_file=str(log), log_stall_s=STALL_S, interval_s=0.25, out=out
        )
        generated = httpx.post(
            sim.url + "/v1/chat/completions",
            timeout=10,
            json={"model": "x", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1},
        )
    assert result.code == WaitCode.READY
    assert [state for _, state in result.transitions] == ["http_503", "ready"]
    # Ready no earlier than the delay, less the startup the simulator did before we began
    # looking, and no later than a poll (0.25 s) and its answer after it.
    # not timing: cause before effect
    assert result.elapsed_s + started_s >= DELAY_S, (result.elapsed_s, started_s)
    judge.at_most((result.elapsed_s - DELAY_S) * 1e3, 400, Stat.EVERY, "ready after the delay")
    assert generated.status_code == 200  # ready meant it
    text = out.getvalue()
    assert "http_503" in text and "the model is loading" in text and "loading weights" in text
    assert text.splitlines()[-1].startswith("llmload wait: ready after")


def test_wait_exits_4_soon_after_the_log_of_a_hung_server_stops(tmp_path: Path, judge: Judge) -> None:
    log = tmp_path / "server.log"
    with start_sim(["--hang", "--log-file", str(log)]) as sim:
        judge.during(time.perf_counter_ns())
        began = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "llmload.cli",
                "wait",
                "--host",
                sim.url,
                "--timeout",
                "120",
                "--log",
                str(log),
                "--log-stall",
                str(STALL_S),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        took = time.monotonic() - began
    assert done.returncode == WaitCode.LOG_STALLED, done.stdout + done.stderr
    # The stall counts from the wait's first look at the log, after the interpreter's start and
    # imports (0.15 s on a quiet machine, up to 3 s with the suite's other tiers beside it: a
    # CPU-bound start, which the canary's wake-ups do not measure), and its probe of the hung
    # server ends when the stall is reached.
    judge.at_most((took - STALL_S) * 1e3, 3000, Stat.EVERY, "llmload wait's exit after the log stalled")
    assert "no_answer" in done.stdout and "likely hung" in done.stdout
    assert "loading weights ... 0%" in done.stdout


def test_wait_through_the_cli_dispatcher(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with start_sim(["--startup-delay-s", "1"]) as sim:
        assert cli.main(["wait", "--host", sim.url, "--timeout", "30"]) == 0
    assert "ready after" in capsys.readouterr().out


def test_fingerprint_of_sglang_nograph_warns_about_cuda_graphs() -> None:
    with start_sim(["--profile", "sglang-nograph"]) as sim:
        info = fingerprint(sim.url)
    assert info["engine"] == "sglang" and info["reachable"] is True
    assert info["launch_args"]["disable_cuda_graph"] is True
    assert info["models"][0]["id"] and info["version"]
    assert warnings(info, planned_concurrency=128)[0].startswith(
        "CUDA graphs are disabled (disable_cuda_graph=true): single-stream decode is typically 2-3x slower"
    )


def test_fingerprint_of_the_vllm_profile_warns_about_nothing() -> None:
    with start_sim(["--profile", "vllm"]) as sim:
        info = fingerprint(sim.url)
    assert info["engine"] == "vllm" and info["endpoints"]["/get_server_info"] == 404
    assert warnings(info, planned_concurrency=128) == []


def completion_tokens(response: httpx.Response, stream: bool) -> int:
    """``usage.completion_tokens`` of a chat completion, streamed (last usage chunk) or not."""
    if not stream:
        return int(response.json()["usage"]["completion_tokens"])
    chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
    return int([c for c in chunks if c.get("usage")][-1]["usage"]["completion_tokens"])


def test_scraped_generation_tokens_equal_the_simulators_own_count() -> None:
    with (
        start_sim(["--ttft-ms", "5", "--step-ms", "1", "--tokens-per-chunk", "3"]) as sim,
        httpx.Client(base_url=sim.url, timeout=30) as client,
        Scraper(sim.url) as scraper,
    ):
        before_truth = sim.counters()["tokens_written_total"]
        first = scraper.poll()
        usage = 0
        for i in range(6):
            stream = i % 2 == 0
            body = {
                "model": "x",
                "messages": [{"role": "user", "content": f"count to {i}"}],
                "max_tokens": 40 + i,
                "stream": stream,
                "stream_options": {"include_usage": True},
            }
            response = client.post("/v1/chat/completions", json=body)
            assert response.status_code == 200
            usage += completion_tokens(response, stream)
            assert scraper.poll() is not None
        last = scraper.poll()
        after_truth = sim.counters()["tokens_written_total"]
    assert first is not None and last is not None and scraper.available is True
    summary = summarize(first, last, scraper.snapshots)
    assert summary["generation_tokens"] == after_truth - before_truth == usage > 0
    # not timing: the server's TTFT is its configured 5 ms or more, a floor noise only lengthens
    assert summary["ttft_mean_ms"] is not None and summary["ttft_mean_ms"] >= 5.0
    assert summary["running"] is not None and summary["kv_cache_usage"] is not None
    assert summary["spec_decode"] is not None  # the simulator exports drafts with 3 tokens a chunk
