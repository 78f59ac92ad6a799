"""Scenarios written the Locust way (``LLMUser`` and ``self.client``), run by real ``locust``
processes against the simulator, measured as the built-in users are: per name, per request,
against the simulator's own ground truth."""

from __future__ import annotations

import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e


def all_records(results: Path) -> list[dict[str, Any]]:
    """Every process's requests*.jsonl: one file when local, one per worker when distributed."""
    files = sorted(results.glob("requests*.jsonl"))
    return [orjson.loads(line) for path in files for line in path.read_bytes().splitlines() if line]


def per_name_counts_match_the_records(summary: dict[str, Any], records: list[dict[str, Any]]) -> Counter[str]:
    lines = Counter((r["stage"], r["name"]) for r in records)
    for stage in summary["stages"]:
        for name, part in stage["by_name"].items():
            requests = part["requests"]
            assert sum(requests.values()) == lines[stage["index"], name], (name, requests)
    assert {name for _, name in lines} == {n for s in summary["stages"] for n in s["by_name"]}
    return Counter(r["name"] for r in records)


@pytest.mark.timing
@pytest.mark.parametrize("processes", [0, 2])
def test_the_agent_example_per_name_and_against_ground_truth(
    run_locust: RunLocust, processes: int, judge: Judge
) -> None:
    distributed = ("--processes", str(processes)) if processes else ()
    judge.during(time.perf_counter_ns())  # a fleet's summary has no window of its own
    with start_sim(["--ttft-ms", "30", "--step-ms", "10", "--seed", "5"]) as sim:
        run = run_locust(
            sim.url, *distributed, locustfile="locustfiles/examples/agent.py", users=6, run_time="14s"
        )
        served = {e["client_request_id"]: e for e in sim.requests()}
        judge.server(sim.stats())
    summary, records = run.summary, all_records(run.results)
    judge.client(summary)
    names = per_name_counts_match_the_records(summary, records)
    assert set(names) == {"agent:ask", "agent:follow-up", "rag"}, names
    # Every ask was answered with a tool call, and every tool call was followed up.
    asks = [r for r in records if r["name"] == "agent:ask" and r["outcome"] == "ok"]
    assert asks and all(r["finish_reason"] in ("tool_calls", "length") for r in asks)
    # not timing: each of the 6 users may stop between its ask and its follow-up
    assert names["agent:follow-up"] >= len(asks) - 6
    stage = summary["stages"][0]
    assert stage["requests"]["failed"] == 0 and summary["exit"]["code"] == 0
    report = (run.results / "report.html").read_text()
    assert "Requests by name" in report and "agent:follow-up" in report
    assert "agent:ask: ok " in run.output  # the console's line per name
    assert stage["by_name"]["rag"]["input_tok_per_s"] > 0

    # Each request against what the simulator did for it, joined by its X-Request-Id.
    added, output_tokens_match = [], 0
    for r in records:
        truth = served[r["id"]]
        output_tokens_match += r["output_tokens"] == truth["completion_tokens"]
        if r["outcome"] == "ok" and r["first_token_ns"] is not None and r["phase"] == "measure":
            server_ms = (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6
            client_ms = (r["first_token_ns"] - r["sent_ns"]) / 1e6
            added.append(client_ms - server_ms)
    assert output_tokens_match == len(records)
    print(f"client TTFT - server's per request: p50 {statistics.median(added):.3f} ms, min {min(added):.3f}")
    # not timing: causal order, the client cannot see a token before the server wrote it
    assert min(added) >= -0.5
    # What the client adds: the trip out and its read of the first token, the client's own work
    # (under a millisecond, as chat's: test_chat_ground_truth), over the measured requests.
    judge.at_most(statistics.median(added), 1.0, Stat.MEDIAN, "client TTFT over the server's, median")


def test_the_mixed_example_weights_its_users(run_locust: RunLocust) -> None:
    with start_sim(["--profile", "vllm"]) as sim:
        run = run_locust(sim.url, locustfile="locustfiles/examples/mixed.py", users=10, run_time="10s")
    summary = run.summary
    names = per_name_counts_match_the_records(summary, all_records(run.results))
    assert set(names) == {"chat", "rag", "embed"}
    parts = summary["stages"][0]["by_name"]
    assert parts["embed"]["output_tokens"] == 0 and parts["embed"]["ttft_ms"] is None
    assert parts["embed"]["input_tok_per_s"] > 0 and parts["embed"]["e2e_ms"]["count"] > 0
    # rag's 4,000 words of prefill (~100 ms in vLLM's profile) against chat's few words.
    # not timing: an order whose margin (~100 ms) is far beyond what noise moves a median by
    assert parts["rag"]["ttft_ms"]["p50"] > parts["chat"]["ttft_ms"]["p50"]


def test_the_structured_example_checks_every_answer(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "10", "--step-ms", "5"]) as sim:
        run = run_locust(sim.url, locustfile="locustfiles/examples/structured.py", users=4, run_time="8s")
    stage = run.summary["stages"][0]
    assert stage["by_name"]["extract"]["requests"]["ok"] > 0 and stage["errors"] == {}


def test_a_check_that_rejects_every_answer_fails_the_run(run_locust: RunLocust, tmp_path: Path) -> None:
    locustfile = tmp_path / "picky.py"
    locustfile.write_text(
        "from locust import events, task\n"
        "from llmload.locust import LLMUser, install, user_message\n"
        "install(events)\n"
        "class Picky(LLMUser):\n"
        "    @task\n"
        "    def ask(self):\n"
        "        self.client.chat([user_message('hi')], max_tokens=4, name='picky',\n"
        "                         check=lambda reply: 'wanted French')\n"
    )
    with start_sim(["--ttft-ms", "5", "--step-ms", "5"]) as sim:
        run = run_locust(sim.url, locustfile=str(locustfile), users=2, run_time="6s", expect_code=None)
    assert run.returncode == 2, run.output[-2000:]
    assert "every request failed" in run.output and "wanted French" in run.output
    assert "Traceback" not in run.output
