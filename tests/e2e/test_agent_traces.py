"""Real agent sessions replayed: tau-bench's airline sessions and SWE-agent's trajectories (the
recorded files beside the clone, tests/support/agent_traces.py) through ``--agent-trace``, in
real Locust runs against the simulator's two replicas behind its session router, joined to the
simulator's ground truth request by request.

What the replay must hold, whatever the live model says: every request is a conversation the
server accepts (the simulator refuses a tool result out of order with a 400, as OpenAI does),
each session's turns stay on one replica, and the account in ``stages[i].sessions.replay`` is
what the file and the simulator's log say, session by session: a reply that called a tool where
the recording's next turn answers one, or called none where it answers in text, stays live;
any other is spliced; a reply the simulator ended at ``max_tokens`` is cut.

The runs replay a few short sessions of each file, on a simulator of 1 ms steps, so each takes
seconds. Sessions that start in the warm-up second are not counted (stages[i].sessions counts
sessions that started in the window); the sessions chosen last longer than it by their recorded
delays alone, so none starts near the window's edge.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.sim.process import start_sim
from llmload.workload.agent_trace import TraceSession, load_agent_trace, session_for
from tests.e2e.conftest import RunLocust
from tests.support.agent_traces import SWE_FC, SWE_TEXT, TAU, recorded
from tests.support.llama import LlamaServer, built, llama_server

pytestmark = pytest.mark.e2e

WARMUP_S = 1.0
SIM = ["--seed", "11", "--replicas", "2", "--router", "session", "--step-base-ms", "1",
       "--step-per-seq-ms", "0", "--step-per-seq2-ms", "0"]  # fmt: skip
REPLAY = ("--warmup-requests", "0", "--warmup-s", str(WARMUP_S))


def subset(
    name: str, count: int, tmp_path: Path, *, floor_s: float = WARMUP_S + 1.0
) -> tuple[Path, tuple[TraceSession, ...]]:
    """The file's ``count`` shortest sessions (recorded delays, and a millisecond a token) among
    those whose delays alone last ``floor_s`` (the warm-up and a second), as a file of their own
    lines."""
    whole = recorded(name)
    lines = [line for line in whole.read_bytes().splitlines() if line.strip()]
    delay_s: Counter[str] = Counter()
    tokens: Counter[str] = Counter()
    for line in lines:
        entry = orjson.loads(line)
        delay_s[entry["session_id"]] += entry.get("delay", 0) / 1000
        tokens[entry["session_id"]] += entry.get("output_length") or 0
    long_enough = [s for s in tokens if delay_s[s] >= floor_s]
    chosen = set(sorted(long_enough, key=lambda s: delay_s[s] + tokens[s] / 1000)[:count])
    assert len(chosen) == count, (name, len(long_enough))
    path = tmp_path / name
    path.write_bytes(b"\n".join(line for line in lines if orjson.loads(line)["session_id"] in chosen) + b"\n")
    return path, load_agent_trace(str(path))


def expected(session: TraceSession, served: list[dict[str, Any]]) -> Counter[str]:
    """One completed session's account, from the file and what the simulator logged serving it."""
    account: Counter[str] = Counter(sessions=1)
    tools = None
    for k, (turn, entry) in enumerate(zip(session.turns, served, strict=True)):
        tools = turn.tools if turn.tools is not None else tools
        called = entry["tool_arguments"] is not None
        # the simulator's rule: offered tools, it calls one unless the turn ends with a result
        assert called == (bool(tools) and turn.messages[-1]["role"] != "tool"), (session.session_id, k)
        account["cut"] += entry["finish_reason"] == "length"
        if k + 1 == len(session.turns):
            account["live"] += 1  # the last reply stands as the server wrote it
            continue
        results = [m for m in session.turns[k + 1].messages if m["role"] == "tool"]
        assert len(results) <= 1 and (not results or session.turns[k + 1].messages[0]["role"] == "tool")
        account["live" if called == bool(results) else "spliced"] += 1
    account["sessions_spliced"] = int(account["spliced"] > 0)
    return account


@pytest.mark.parametrize(("name", "count"), [(TAU, 4), (SWE_FC, 2), (SWE_TEXT, 3)])
def test_recorded_sessions_replay_as_valid_conversations_with_their_account(
    run_locust: RunLocust, tmp_path: Path, name: str, count: int
) -> None:
    path, sessions = subset(name, count, tmp_path)
    longest_s = max(sum(t.delay_s for t in s.turns) for s in sessions)
    run_time = math.ceil(WARMUP_S + 2 * (longest_s + 1.5))  # two sessions a user: the second is counted
    with start_sim(SIM) as sim:
        run = run_locust(
            sim.url, "--agent-trace", str(path), *REPLAY, locustfile="locustfiles/agent.py",
            users=count, run_time=f"{run_time}s",
        )  # fmt: skip
        truth = sorted(sim.requests(), key=lambda e: e["arrival_ns"])
    stage = run.summary["stages"][0]
    # Every request was a conversation the simulator accepted: nothing refused, nothing failed
    # (a request the run's end cut short is unfinished, not failed).
    assert stage["requests"]["failed"] == 0 and {e["outcome"] for e in truth} <= {"ok", "cancelled"}, truth
    records = {r["id"]: r for r in run.records}
    by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in truth:
        by_key[entry["session"]].append(entry)
    account: Counter[str] = Counter()
    for key, served in by_key.items():
        assert len({e["replica"] for e in served}) == 1, (key, served)  # a session stays on its replica
        _run, user, number = key.rsplit(".", 2)
        session = session_for(sessions, int(user), int(number) - 1)
        whole = len(served) == len(session.turns) and all(e["outcome"] == "ok" for e in served)
        if whole and records[served[0]["client_request_id"]]["phase"] == "measure":
            account += expected(session, served)
    assert account["sessions"] >= 1, (by_key.keys(), run.output[-3000:])
    live = stage["sessions"]
    assert live["replay"] == {
        "sessions": account["sessions"],
        "turns_live": account["live"],
        "turns_spliced": account["spliced"],
        "turns_recorded": 0,
        "turns_cut": account["cut"],
        "sessions_spliced": account["sessions_spliced"],
    }, (live["replay"], account)
    assert live["completed"] == account["sessions"] and live["failed"] == 0
    if name == SWE_TEXT:  # no tools: every reply is text, as the recording's next turn expects
        assert account["spliced"] == 0
    else:  # the simulator calls a tool wherever it can, so where the recording answered in text
        assert account["spliced"] > 0 and account["live"] > account["sessions"]
    assert f"replay of {account['sessions']} recorded sessions" in run.output
    assert "prefix cache hit rate by turn" in run.output and "meant to be unique" not in run.output
    # each later turn finds the history its session left on its replica
    assert live["cache_hit_rate_by_turn"]["2"] > 0.5, live["cache_hit_rate_by_turn"]
    print(f"{name}: {live['replay']}, cache hit rate by turn {live['cache_hit_rate_by_turn']}")


@pytest.fixture
def llama(tmp_path: Path) -> Iterator[LlamaServer]:
    """One slot of the whole context: a SWE-agent session's prompt with its tools' schemas runs
    to thousands of tokens. ``--jinja``: tools are rendered by the model's chat template."""
    built()  # make test's background build, waited for before the test's own time limit
    with llama_server(tmp_path, slots=1, context=8192, extra=("--jinja",)) as server:
        yield server


@pytest.mark.timeout(300, func_only=True)
def test_function_calling_sessions_replay_against_llama_server(
    run_locust: RunLocust, llama: LlamaServer, tmp_path: Path
) -> None:
    # The shortest function-calling session, by one user: a real model's replies (SmolLM2-135M,
    # its calls parsed by llama.cpp from what its template made it write) fitted to the recording.
    path, (session,) = subset(SWE_FC, 1, tmp_path, floor_s=1.0)
    # No warm-up: the first session is the one counted. On a loaded machine one session's five
    # turns took the whole 30 s, so a session begun after a warm-up never started in the window.
    run = run_locust(
        llama.url, "--agent-trace", str(path), "--warmup-requests", "0", "--warmup-s", "0",
        locustfile="locustfiles/agent.py",
        users=1, run_time="30s", timeout_s=280,
    )  # fmt: skip
    stage = run.summary["stages"][0]
    assert stage["requests"]["failed"] == 0, run.output[-3000:]  # llama-server took every turn
    turns = len(session.turns)
    records = sorted(run.records, key=lambda r: r["sent_ns"])
    counted = [
        records[i : i + turns]
        for i in range(0, len(records) - turns + 1, turns)
        if records[i]["phase"] == "measure" and all(r["outcome"] == "ok" for r in records[i : i + turns])
    ]
    assert counted, [(r["phase"], r["outcome"], r["labels"]) for r in records]
    replay = stage["sessions"]["replay"]
    # every turn of a counted session is live or spliced; the cut ones are those the server
    # ended at max_tokens
    assert replay["sessions"] == len(counted) and replay["turns_recorded"] == 0
    assert replay["turns_live"] + replay["turns_spliced"] == turns * len(counted), replay
    assert replay["turns_cut"] == sum(r["finish_reason"] == "length" for s in counted for r in s), replay
    assert f"replay of {len(counted)} recorded sessions" in run.output
    # the cache by turn is the window's requests' own counts (on a loaded machine a session's
    # later turns can all fall in the drain: a first turn's prefill took 21.7 s in CI)
    by_turn: dict[str, list[int]] = {}
    for r in records:
        if r["phase"] == "measure" and r["cached_tokens"] is not None and r["prompt_tokens"]:
            pair = by_turn.setdefault(r["labels"]["turn"], [0, 0])
            pair[0] += r["prompt_tokens"]
            pair[1] += r["cached_tokens"]
    want = {turn: round(cached / prompt, 4) for turn, (prompt, cached) in by_turn.items()}
    assert stage["sessions"]["cache_hit_rate_by_turn"] == want, stage["sessions"]
    # and llama-server reused each turn's history: a later turn's prompt is mostly its cache
    later = [r for r in records if r["labels"]["turn"] != "1" and r["prompt_tokens"]]
    assert later and all(r["cached_tokens"] / r["prompt_tokens"] > 0.5 for r in later), later
    print(f"llama-server replay of {session.session_id}: {replay}")
