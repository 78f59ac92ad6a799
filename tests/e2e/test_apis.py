"""The Responses API and Anthropic's Messages API, measured as exactly as chat: real locust runs
against the simulator, every record joined to the simulator's own by request id."""

from __future__ import annotations

from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e

MS = 1e6
THINK = 8
# The log-bucket histograms read a quantile within 1 % (docs/metrics.md): 0.2 ms at a 20 ms
# step, and a read stamped a little late moves one gap and the next by as much.
STEP_BASE_MS = 0.5
# How late the client reads what the server wrote: the trip back and the client's own read, which
# the design holds under a millisecond (the same base as chat's, test_chat_ground_truth).
READ_BASE_MS = 1.0


def _joined(
    records: list[dict[str, Any]], served: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    by_id = {entry["client_request_id"]: entry for entry in served}
    return [(r, by_id[r["id"]]) for r in records if r["outcome"] == "ok"]


@pytest.mark.timing
@pytest.mark.parametrize("api", ["responses", "messages"])
def test_streams_of_each_api_match_the_simulators_truth(
    run_locust: RunLocust, api: str, judge: Judge
) -> None:
    with start_sim(["--ttft-ms", "50", "--step-ms", "20", "--reasoning-tokens", str(THINK)]) as sim:
        run = run_locust(sim.url, "--api", api, "--max-tokens", "48", "--ignore-eos", users=8, run_time="10s")
        served = sim.requests()
        judge.server(sim.stats())
    stage = run.summary["stages"][0]
    judge.client(run.summary)
    joined = _joined(run.records, served)
    assert len(joined) >= 30 and stage["requests"]["failed"] == 0
    assert {entry["path"] for _, entry in joined} == {f"/v1/{api}"}
    late_first, late_answer = [], []
    for record, entry in joined:
        # token counts are the server's, the thinking split exactly as it wrote it
        assert record["output_tokens"] == entry["completion_tokens"] == 48
        assert (record["reasoning_tokens"], record["answer_tokens"]) == (THINK, 48 - THINK)
        assert record["token_events"] == entry["events"] and record["finish_reason"] == "length"
        assert record["prompt_tokens"] == entry["prompt_tokens"]
        if record["phase"] != "measure":
            continue  # the claims below are about the measured requests, as the summary's are
        # the client reads each moment after the server wrote it: never earlier
        late_first.append((record["first_token_ns"] - entry["first_token_ns"]) / MS)
        late_answer.append((record["first_output_ns"] - entry["first_answer_ns"]) / MS)
    assert min(late_first) >= 0 and min(late_answer) >= 0
    # and, typically, no later than its own read
    for late, what in ((late_first, "first token"), (late_answer, "first answer token")):
        late.sort()
        judge.at_most(late[len(late) // 2], READ_BASE_MS, Stat.MEDIAN, f"{api}: {what} read late, median")
    judge.close(stage["itl_ms"]["p50"], 20, STEP_BASE_MS, Stat.MEDIAN, f"{api}: ITL p50")
    judge.close(stage["tpot_ms"]["p50"], 20, STEP_BASE_MS, Stat.MEDIAN, f"{api}: TPOT p50")
    assert stage["reasoning"]["reasoning_tokens"] == THINK * stage["requests"]["ok"]
    assert stage["token_source"] == "usage"


@pytest.mark.parametrize("api", ["responses", "messages"])
def test_whole_answers_of_each_api_count_the_servers_tokens(run_locust: RunLocust, api: str) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2", "--reasoning-tokens", "3"]) as sim:
        run = run_locust(
            sim.url, "--api", api, "--no-stream", "--max-tokens", "16", "--ignore-eos", users=2, run_time="4s"
        )
        served = sim.requests()
    joined = _joined(run.records, served)
    assert joined
    # A whole Messages answer carries its thinking as text with no count of its own (Anthropic's
    # usage has none), so its split is unknown and not invented; the Responses API counts it.
    thought = 3 if api == "responses" else 0
    for record, entry in joined:
        assert record["output_tokens"] == entry["completion_tokens"] == 16
        assert record["reasoning_tokens"] == thought and record["finish_reason"] == "length"
    assert run.summary["stages"][0]["e2e_ms"] is not None


def test_a_request_the_server_refuses_is_one_clear_line(run_locust: RunLocust) -> None:
    # llmload always sends the max_tokens Anthropic's API requires; a zero one the server refuses
    with start_sim(["--ttft-ms", "5", "--step-ms", "2"]) as sim:
        run = run_locust(
            sim.url,
            "--api",
            "messages",
            "--extra-body",
            '{"max_tokens": 0}',
            users=1,
            run_time="3s",
            expect_code=None,
        )
    assert run.returncode != 0
    assert "HTTP 400" in run.output or "http_4xx" in run.output
