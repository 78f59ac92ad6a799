"""The Responses API and Anthropic's Messages API, measured as exactly as chat: real locust runs
against the simulator, every record joined to the simulator's own by request id."""

from __future__ import annotations

from typing import Any

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust

pytestmark = [pytest.mark.e2e, pytest.mark.timing]

MS = 1e6
CONVERSATION = "locustfiles/conversation.py"
THINK = 8


def _joined(
    records: list[dict[str, Any]], served: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    by_id = {entry["client_request_id"]: entry for entry in served}
    return [(r, by_id[r["id"]]) for r in records if r["outcome"] == "ok"]


@pytest.mark.parametrize("api", ["responses", "messages"])
def test_streams_of_each_api_match_the_simulators_truth(run_locust: RunLocust, api: str) -> None:
    with start_sim(["--ttft-ms", "50", "--step-ms", "20", "--reasoning-tokens", str(THINK)]) as sim:
        run = run_locust(sim.url, "--api", api, "--max-tokens", "48", "--ignore-eos", users=8, run_time="10s")
        served = sim.requests()
    stage = run.summary["stages"][0]
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
        # the client reads each moment after the server wrote it: never earlier
        late_first.append((record["first_token_ns"] - entry["first_token_ns"]) / MS)
        late_answer.append((record["first_output_ns"] - entry["first_answer_ns"]) / MS)
    assert min(late_first) >= 0 and min(late_answer) >= 0
    (health,) = stage["client_health"].values()
    # and no later than chat's bound (test_chat_ground_truth): 2 ms and the run's loop lag
    for late in (late_first, late_answer):
        late.sort()
        assert late[len(late) // 2] <= 2 + health["loop_lag_p99_ms"], (late[len(late) // 2], health)
    assert stage["itl_ms"]["p50"] == pytest.approx(20, abs=1) and stage["tpot_ms"]["p50"] == pytest.approx(
        20, abs=1
    )
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


def test_a_responses_agent_continues_on_the_servers_state_as_resending_would(run_locust: RunLocust) -> None:
    with start_sim(["--profile", "vllm"]) as sim:
        run = run_locust(
            sim.url, locustfile="locustfiles/examples/responses_agent.py", users=4, run_time="12s"
        )
        served = {entry["client_request_id"]: entry for entry in sim.requests()}
    parts = run.summary["stages"][0]["by_name"]
    assert {"stateful:0", "stateful:3", "resent:0", "resent:3"} <= set(parts)
    assert run.summary["stages"][0]["errors"] == {}
    stateful = [r for r in run.records if (r["name"] or "").startswith("stateful:") and r["outcome"] == "ok"]
    later = [r for r in stateful if r["name"] != "stateful:0"]
    assert later
    for r in later:
        # the server read the whole conversation although the request carried one turn, and
        # its prefix cache held the history it had seen
        assert r["prompt_tokens"] == served[r["id"]]["prompt_tokens"] > 48
        assert served[r["id"]]["cached_tokens"] > 0

    # the same conversation either way: the server read as long a prompt on each later turn
    # (a few template tokens more for the stored one, which keeps each turn's closing tokens)
    def prompt(name: str) -> float:
        lengths = [r["prompt_tokens"] for r in run.records if r["name"] == name and r["outcome"] == "ok"]
        return sum(lengths) / len(lengths)

    for turn in range(1, 4):
        assert prompt(f"stateful:{turn}") == pytest.approx(prompt(f"resent:{turn}"), rel=0.1)


def test_the_conversation_workload_keeps_its_history_on_the_server_or_resends_it(
    run_locust: RunLocust,
) -> None:
    # The same conversations two ways against one simulator (its vLLM profile caches prefixes):
    # resent whole each turn, and kept on the server, each later turn one message and the
    # previous answer's id. The server reads the same conversation either way.
    args = (
        "--api",
        "responses",
        "--turns",
        "3",
        "--prompt-tokens",
        "24",
        "--max-tokens",
        "8",
        "--ignore-eos",
    )
    prompts: dict[str, dict[str, list[int]]] = {}
    with start_sim(["--profile", "vllm", "--seed", "5"]) as sim:
        for state in ("resend", "server"):
            run = run_locust(
                sim.url, *args, "--conversation-state", state, locustfile=CONVERSATION, users=2, run_time="8s"
            )
            served = {entry["client_request_id"]: entry for entry in sim.requests()}
            assert run.summary["stages"][0]["errors"] == {}, state
            # the control plane's own calls (fingerprint, model listing) log nothing at INFO
            assert "HTTP Request:" not in run.output, run.output[:2000]
            by_turn: dict[str, list[int]] = {}
            for r in run.records:
                if r["outcome"] != "ok":
                    continue
                truth = served[r["id"]]
                assert r["prompt_tokens"] == truth["prompt_tokens"], r
                turn = r["labels"]["turn"]
                by_turn.setdefault(turn, []).append(r["prompt_tokens"])
                if turn != "1":  # the history the server had seen was in its prefix cache
                    assert truth["cached_tokens"] > 0, (state, r)
            prompts[state] = by_turn
    for turn in ("2", "3"):
        assert prompts["server"][turn] and prompts["resend"][turn], prompts
        kept, resent = (sum(v) / len(v) for v in (prompts["server"][turn], prompts["resend"][turn]))
        assert kept == pytest.approx(resent, rel=0.1), (turn, prompts)
    # the server's state is the Responses API's alone: a wrong option is one line, before any request
    wrong = run_locust(
        "http://127.0.0.1:9",
        "--conversation-state",
        "server",
        locustfile=CONVERSATION,
        run_time="2s",
        expect_code=None,
    )
    assert wrong.returncode != 0 and "Traceback" not in wrong.output
    assert "--conversation-state" in wrong.output and "--api responses" in wrong.output, wrong.output[-2000:]
