"""Startup delay, hang, fingerprints and process isolation."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from llmload.sim.process import start_sim
from tests.support.wire import chat_body, connect, exchange, read_response, request_bytes

pytestmark = pytest.mark.integration

CHAT = "/v1/chat/completions"


def test_startup_delay(tmp_path: Path) -> None:
    log = tmp_path / "sim.log"
    with start_sim(["--startup-delay-s", "1.2", "--log-file", str(log)]) as sim:
        assert sim.get("/health")[0] == 503
        response = exchange(sim.port, CHAT, chat_body(2))
        assert response.status == 503
        assert sim.requests()[-1]["outcome"] == "rejected"
        time.sleep(0.6)
        growing = log.read_text().splitlines()
        assert any("loading weights" in line and "%" in line for line in growing)
        sim.wait_ready(timeout_s=5)
        assert exchange(sim.port, CHAT, chat_body(2)).status == 200
    lines = log.read_text().splitlines()
    assert len(lines) > len(growing) >= 2
    assert "ready" in lines[-1]


def test_hang(tmp_path: Path) -> None:
    log = tmp_path / "sim.log"
    with start_sim(["--hang", "--log-file", str(log)]) as sim:
        with connect(sim.port) as sock:
            sock.sendall(request_bytes("/health"))
            response = read_response(sock, timeout_s=0.7)
        assert (response.raw, response.end) == (b"", "timeout")
        size = log.stat().st_size
        time.sleep(1.1)
        assert log.stat().st_size == size, "the log stops growing"


@pytest.mark.parametrize(
    ("profile", "server_info"),
    [("vllm", None), ("sglang-nograph", True), ("sglang", False), ("interior-peak", None)],
)
def test_fingerprints(profile: str, server_info: bool | None) -> None:
    with start_sim(["--profile", profile]) as sim:
        status, body = sim.get("/get_server_info")
        version = exchange(sim.port, "/version")
        metrics = exchange(sim.port, "/metrics")
        models = sim.get_json("/v1/models")
    if server_info is None:
        assert status == 404
    else:
        assert status == 200
        assert json.loads(body)["disable_cuda_graph"] is server_info
    assert "version" in json.loads(version.body)
    engine = "sglang" if profile.startswith("sglang") else "vllm"
    assert engine in version.headers["server"]
    assert models["data"][0]["id"] == "sim-llama-3-8b"
    assert models["data"][0]["owned_by"] == engine
    text = metrics.body.decode()
    for name in (
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:generation_tokens_total",
        "vllm:prompt_tokens_total",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:kv_cache_usage_perc",
    ):
        assert name in text
    assert "spec_decode" not in text


def test_metrics_follow_the_traffic(sim_factory: object) -> None:
    sim = sim_factory("--step-base-ms=2", "--step-per-seq-ms=0.1")  # type: ignore[operator]
    for _ in range(3):
        exchange(sim.port, CHAT, chat_body(5))
    values = {}
    for line in exchange(sim.port, "/metrics").body.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name.split("{")[0] + ("" if "le=" not in name else name[name.index("le=") :])] = value
    assert float(values["vllm:generation_tokens_total"]) == 15
    assert float(values["vllm:prompt_tokens_total"]) == 3 * (4 + 6)
    assert float(values["vllm:time_to_first_token_seconds_count"]) == 3


ISOLATION = textwrap.dedent(
    """
    import os, signal, socket, sys
    original = socket.socket
    import llmload.sim, llmload.sim.process
    from llmload.sim.cli import config_from_args
    from llmload.sim.server import run_loop, serve

    def announce(line):
        clean = "gevent" not in sys.modules and "locust" not in sys.modules
        print(line, clean and socket.socket is original and socket.socket.__module__ == "socket", flush=True)
        os.kill(os.getpid(), signal.SIGTERM)

    run_loop(serve(config_from_args(["--port", "0"]), announce))
    print("gevent" in sys.modules or "locust" in sys.modules, flush=True)
    """
)


def test_running_the_simulator_never_imports_gevent_or_locust() -> None:
    out = subprocess.run(
        [sys.executable, "-c", ISOLATION], capture_output=True, text=True, timeout=30, check=True
    ).stdout.split("\n")
    assert out[0].startswith("llmload sim listening on http://127.0.0.1:")
    assert out[0].endswith(" True")
    assert out[1] == "False"
