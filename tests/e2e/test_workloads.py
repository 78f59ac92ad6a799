"""Shared-prefix and multi-turn workloads in real Locust runs, local and distributed.

The simulator has no prefix cache, so these tests check what the workloads send and how the
summary accounts for it (labels, per-group and per-turn numbers, token counts under the
simulator's word rule), not a cache speed-up. Per-label TTFT in the summary must equal, to the
last field, what the raw records recompute.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from llmload.metrics import derive
from llmload.metrics.histogram import LogHistogram
from llmload.results.from_stats import latency_ms
from llmload.results.summary import to_json
from llmload.sim.process import start_sim
from tests.e2e.conftest import RunLocust
from tests.support.fleet import LocustFleet
from tests.support.truth import rebuild

pytestmark = pytest.mark.e2e

SIM = ["--ttft-ms", "20", "--step-ms", "10"]
GROUPS, PREFIX_TOKENS, SHARE = 3, 40, 0.6
PREFIX = (
    "--prefix-groups",
    str(GROUPS),
    "--prefix-tokens",
    str(PREFIX_TOKENS),
    "--prefix-share",
    str(SHARE),
    "--prompt-tokens",
    "uniform:10:30",
    "--max-tokens",
    "normal:8:2:12",
    "--ignore-eos",
)
TURNS, WORDS, REPLY = 3, 10, 8
CONVERSATION = (
    "--turns",
    str(TURNS),
    "--prompt-tokens",
    str(WORDS),
    "--max-tokens",
    str(REPLY),
    "--ignore-eos",
    "--think-time-s",
    "0.05",
)
AGENT_TURNS, FAN_OUT, SUB_TURNS = 3, 2, 2
AGENT = (
    "--turns",
    str(AGENT_TURNS),
    "--fan-out",
    str(FAN_OUT),
    "--fan-out-at",
    "1",
    "--sub-agent-turns",
    str(SUB_TURNS),
    "--tool-result-tokens",
    "12",
    "--tool-latency-ms",
    "20",
    "--prompt-tokens",
    str(WORDS),
    "--max-tokens",
    str(REPLY),
    "--ignore-eos",
)


def _measured(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["phase"] == "measure" and r["outcome"] == "ok"]


def _check_labels(stage: dict[str, Any], records: list[dict[str, Any]], name: str) -> Counter[str]:
    """Every label's TTFT in the summary is exactly what its records give; returns the counts."""
    by_label: dict[str, LogHistogram] = defaultdict(LogHistogram)
    for r in _measured(records):
        ttft = derive.ttft_ns(rebuild(r))
        assert ttft is not None
        by_label[f"{name}={r['labels'][name]}"].add(ttft)
    expected = {label: to_json(latency_ms(h)) for label, h in sorted(by_label.items())}
    assert stage["ttft_ms_by_label"] == expected
    counts = Counter({label.split("=", 1)[1]: h.count for label, h in by_label.items()})
    assert sum(counts.values()) == stage["requests"]["ok"] == stage["ttft_ms"]["count"]
    return counts


def _check_prefix(summary: dict[str, Any], records: list[dict[str, Any]]) -> None:
    (stage,) = summary["stages"]
    assert stage["requests"]["failed"] == 0 and stage["requests"]["ok"] > 100
    counts = _check_labels(stage, records, "group")
    assert set(counts) == {"0", "1", "2", "none"}
    shared = sum(n for group, n in counts.items() if group != "none") / sum(counts.values())
    # not timing: a share drawn per request (a binomial over a few hundred), not a time
    assert abs(shared - SHARE) < 0.12, counts
    for r in records:
        group = r["labels"]["group"]
        assert group in ("none", str(int(r["user"]) % GROUPS)), r["id"]
        # not timing: the configured prompt length, uniform:10:30 words after the shared prefix
        assert 10 + PREFIX_TOKENS <= r["prompt_tokens_requested"] <= 30 + PREFIX_TOKENS
        assert 1 <= r["max_tokens"] <= 12
        if r["outcome"] == "ok":  # the simulator's rule: words + 3 per message (2) + 3
            assert r["prompt_tokens"] == r["prompt_tokens_requested"] + 9, r["id"]
    # requested vs received, as the summary reports them: the difference is the template
    received = stage["prompt_tokens_per_request"]["mean"]
    assert received == pytest.approx(stage["prompt_tokens_requested_mean"] + 9, abs=1e-3)


def _check_conversation(summary: dict[str, Any], records: list[dict[str, Any]]) -> None:
    (stage,) = summary["stages"]
    assert stage["requests"]["failed"] == 0 and stage["requests"]["ok"] > 60
    counts = _check_labels(stage, records, "turn")
    assert set(counts) == {str(n) for n in range(1, TURNS + 1)}
    # Turns come in order per user, so their counts differ by at most the users in flight.
    assert max(counts.values()) - min(counts.values()) <= 16, counts
    for r in records:
        if r["outcome"] != "ok":
            continue
        n = int(r["labels"]["turn"])
        words = WORDS * n + REPLY * (n - 1)  # n user messages, n - 1 replies of REPLY tokens
        assert r["prompt_tokens_requested"] == words, r["id"]
        assert r["prompt_tokens"] == words + 3 * (2 * n - 1) + 3, r["id"]
    for r in records:  # with no failures, each user's requests run 1, 2, ..., TURNS, 1, 2, ...
        count = int(r["id"].rsplit("-", 1)[1])  # the user's request count ends the id
        assert int(r["labels"]["turn"]) == count % TURNS + 1, r["id"]


def _check_agent(summary: dict[str, Any], records: list[dict[str, Any]]) -> None:
    (stage,) = summary["stages"]
    assert stage["requests"]["failed"] == 0
    sessions = stage["sessions"]
    assert sessions["completed"] >= 2 and sessions["failed"] == 0, sessions
    # every completed session ran its own turns and its sub-agents' (each with its own ids)
    assert sessions["turns_per_session"] == {"mean": AGENT_TURNS, "max": AGENT_TURNS}
    per_session = AGENT_TURNS + FAN_OUT * SUB_TURNS
    assert sessions["requests_per_session"] == {"mean": per_session, "max": per_session}
    assert sessions["duration_ms"]["count"] == sessions["completed"]
    assert set(sessions["cache_hit_rate_by_turn"]) == {str(n) for n in range(1, AGENT_TURNS + 1)}
    last_turns = [r for r in records if r["labels"].get("turn") == str(AGENT_TURNS) and r["outcome"] == "ok"]
    assert sessions["completed"] <= len(last_turns)
    # Turn by turn, a session's prompt is the last one with the reply (REPLY tokens under
    # --ignore-eos) and a tool result added: it grows by at least those every turn.
    own = sorted(
        (r for r in records if "turn" in r["labels"] and r["outcome"] == "ok"), key=lambda r: r["sent_ns"]
    )
    by_user: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in own:
        by_user[r["user"]].append(r)
    grown = 0
    for turns in by_user.values():
        for before, after in pairwise(turns):
            if int(after["labels"]["turn"]) == int(before["labels"]["turn"]) + 1:
                assert after["prompt_tokens"] >= before["prompt_tokens"] + REPLY, (before["id"], after["id"])
                grown += 1
    assert grown >= sessions["completed"]


def test_prefix_groups_local(run_locust: RunLocust) -> None:
    with start_sim(SIM) as sim:
        run = run_locust(sim.url, *PREFIX, locustfile="locustfiles/prefix.py", users=6, run_time="6s")
    _check_prefix(run.summary, run.records)


def test_conversation_local(run_locust: RunLocust) -> None:
    with start_sim(SIM) as sim:
        run = run_locust(
            sim.url, *CONVERSATION, locustfile="locustfiles/conversation.py", users=6, run_time="6s"
        )
    assert run.summary["run"]["scenario"] == "conversation"
    _check_conversation(run.summary, run.records)


def test_agent_local(run_locust: RunLocust) -> None:
    with start_sim(SIM) as sim:
        run = run_locust(sim.url, *AGENT, locustfile="locustfiles/agent.py", users=4, run_time="6s")
    assert run.summary["run"]["scenario"] == "agent"
    _check_agent(run.summary, run.records)


@pytest.mark.parametrize(
    ("locustfile", "args", "check"),
    [
        ("locustfiles/prefix.py", PREFIX, _check_prefix),
        ("locustfiles/conversation.py", CONVERSATION, _check_conversation),
        ("locustfiles/agent.py", AGENT, _check_agent),
    ],
    ids=["prefix", "conversation", "agent"],
)
def test_distributed(tmp_path: Path, locustfile: str, args: tuple[str, ...], check: Any) -> None:
    with start_sim(SIM) as sim, LocustFleet(tmp_path, sim.url, locustfile=locustfile) as fleet:
        fleet.start_master(*args, workers=2, users=8, run_time="6s")
        for _ in range(2):
            fleet.start_worker()
        assert fleet.wait_master(90) == 0
        assert fleet.wait_workers(15) == [0, 0]
    per_worker = fleet.records()
    assert sorted(per_worker) == ["worker-0", "worker-1"]
    assert all(_measured(records) for records in per_worker.values()), "both workers measured"
    check(fleet.summary, [r for records in per_worker.values() for r in records])


# The Responses API's server-side state: no timing is compared, so these run beside others.
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

    # The same conversation either way: the server read as long a prompt on each later turn, a
    # few template tokens more for the stored one, which keeps each turn's closing tokens (1.8
    # to 4.9 more by turn 3, over 27 and 17 conversations). Answers end at the simulator's EOS,
    # so two sets of conversations differ by chance too: the means are judged by the spread of
    # their own samples (3 standard errors of the difference). A fixed 10% once failed a
    # fresh-clone run (135 against 121 tokens) that had few conversations of each kind.
    def prompts(name: str) -> list[int]:
        lengths = [r["prompt_tokens"] for r in run.records if r["name"] == name and r["outcome"] == "ok"]
        assert len(lengths) >= 2, (name, lengths)
        return lengths

    for turn in range(1, 4):
        kept, resent = prompts(f"stateful:{turn}"), prompts(f"resent:{turn}")
        spread = math.sqrt(statistics.variance(kept) / len(kept) + statistics.variance(resent) / len(resent))
        gap = statistics.fmean(kept) - statistics.fmean(resent)
        assert abs(gap) <= 2 * turn + 3 * spread, (turn, kept, resent)  # not timing: prompt tokens


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
                sim.url,
                *args,
                "--conversation-state",
                state,
                locustfile="locustfiles/conversation.py",
                users=2,
                run_time="8s",
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
        locustfile="locustfiles/conversation.py",
        run_time="2s",
        expect_code=None,
    )
    assert wrong.returncode != 0 and "Traceback" not in wrong.output
    assert "--conversation-state" in wrong.output and "--api responses" in wrong.output, wrong.output[-2000:]
