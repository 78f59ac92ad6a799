"""Agentic sessions against the real simulator, in a plain process: what each turn sends (the
bytes on the wire), how sub-agents overlap and join, the session's key on every request, and
the session's account in the stage's stats. Joined to the simulator's own log by request id."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from llmload.config.asked import RequestConfig, WorkloadConfig
from llmload.config.settings import PhaseConfig, RunConfig, TransportConfig
from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.core.timeouts import Timeouts
from llmload.run.agent import Agent, Seat
from llmload.run.llm_client import LLMClient
from llmload.run.process_run import ProcessRun
from llmload.sim.process import SimProcess, start_sim
from llmload.transport.base import HttpRequest, ResponseSink, Transport
from llmload.workload.agents import TOOL_RESULT_PREFIX, AgentSpec
from llmload.workload.conversations import ConversationSpec
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    # The batching engine with its prefix cache (no --ttft-ms): turns find their history cached.
    with start_sim(["--seed", "5"]) as process:
        yield process


class Wire:
    """Every request the session's transports wrote and the body each answer streamed, by
    request id."""

    def __init__(self) -> None:
        self.sent: dict[str, HttpRequest] = {}
        self.received: dict[str, bytearray] = {}

    def reply(self, request_id: str) -> str:
        """The answer's text, from the SSE bytes as they came (not llmload's own reader)."""
        text = []
        for line in self.received[request_id].decode().split("\n"):
            if line.startswith("data: {"):
                for choice in orjson.loads(line[6:]).get("choices") or ():
                    text.append(choice["delta"].get("content") or "")
        return "".join(text)

    def wrap(self, inner: Transport) -> Transport:
        wire = self

        class Capturing:
            def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
                request_id = dict(request.headers)["X-Request-Id"]
                wire.sent[request_id] = request
                body = wire.received[request_id] = bytearray()
                on_data = sink.on_data

                def keep(t_ns: int, data: bytes) -> bool:
                    body.extend(data)
                    return on_data(t_ns, data)

                sink.on_data = keep  # type: ignore[method-assign]
                inner.exchange(request, sink)

            def close(self) -> None:
                inner.close()

        return Capturing()


def _session(sim: SimProcess, tmp_path: Path, agent: AgentSpec, wire: Wire) -> ProcessRun:
    workload = WorkloadConfig(
        prompt_tokens=24, max_tokens=12, conversation=ConversationSpec(turns=4), agent=agent
    )
    config = RunConfig(
        host=sim.url,
        request=RequestConfig(model="sim-llama-3-8b"),
        workload=workload,
        phases=PhaseConfig(),
        timeouts=Timeouts(),
        transport=TransportConfig(sim.url),
        results_dir=str(tmp_path),
        run_id="agents",
    )
    session = ProcessRun(config)
    transports = session.transports  # every connection, sub-agents' too, through the wire
    session.transports = SimpleNamespace(new=lambda: wire.wrap(transports.new()), close=transports.close)  # type: ignore[assignment]
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), 1))
    return session


def _run(session: ProcessRun, key: str) -> tuple[Any, list[dict[str, Any]]]:
    transport = session.transports.new()
    client = LLMClient(lambda **_: None, session, 0, lambda: transport)
    texts = iter(range(1, 1000))
    agent = Agent(session, lambda **_: None, "chat")
    try:
        account = agent.run(Seat(client, 0, key, lambda n: session.texts.get(n, 0, next(texts))))
    finally:
        transport.close()
    session.fold_pending()
    lines = (Path(session.results.path) / "requests.jsonl").read_bytes().splitlines()
    return account, [orjson.loads(line) for line in lines]


def _messages(request: HttpRequest) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = orjson.loads(request.body)["messages"]
    return messages


def _turn(record: dict[str, Any], label: str = "turn") -> int:
    return int(dict(record["labels"])[label])


def test_each_turn_resends_the_servers_replies_and_the_tool_results(sim: SimProcess, tmp_path: Path) -> None:
    wire = Wire()
    session = _session(sim, tmp_path, AgentSpec(tool_result_tokens=20, tool_latency_ms=20), wire)
    account, records = _run(session, "s-1")
    assert account.outcome == "completed" and account.turns == account.requests == 4
    truth = {e["client_request_id"]: e for e in sim.requests()}
    records.sort(key=_turn)
    replies: list[str] = []
    for r in records:
        sent = _messages(wire.sent[r["id"]])
        request = wire.sent[r["id"]]
        assert ("X-Session-Affinity", "s-1") in request.headers and ("X-Session-ID", "s-1") in request.headers
        # the prompt is the first one, then each earlier reply exactly as the server streamed
        # it and a tool result of 20 words
        assert [m["content"] for m in sent[1::2]] == replies, r["id"]
        assert all(m["role"] == "assistant" for m in sent[1::2])
        for tool in sent[2::2]:
            assert tool["role"] == "user" and tool["content"].startswith(TOOL_RESULT_PREFIX)
            assert len(tool["content"].removeprefix(TOOL_RESULT_PREFIX).split()) == 20
        replies.append(wire.reply(r["id"]))
        assert r["output_tokens"] == truth[r["id"]]["completion_tokens"]
        assert r["prompt_tokens"] == truth[r["id"]]["prompt_tokens"]
    # Each turn found the previous turn's prompt in the cache, in whole 16-token blocks.
    for before, after in pairwise(records):
        # not timing: whole 16-token blocks of the previous prompt, counted
        assert after["cached_tokens"] >= before["prompt_tokens"] // 16 * 16 - 16, (before, after)
    stats = session.take_stats()[0].sessions
    assert stats.ended == {"completed": 1} and stats.hist["turns"].count == 1
    assert set(stats.by_turn) == {"1", "2", "3", "4"}
    session.close()


@pytest.mark.timing
def test_sub_agents_run_in_parallel_and_the_parent_waits_for_every_one(
    sim: SimProcess, tmp_path: Path, judge: Judge
) -> None:
    wire = Wire()
    spec = AgentSpec(tool_result_tokens=8, fan_out=3, fan_out_at=2, sub_turns=2)
    session = _session(sim, tmp_path, spec, wire)
    judge.during(time.perf_counter_ns())
    account, records = _run(session, "s-2")
    assert account.outcome == "completed"
    own = sorted((r for r in records if "turn" in dict(r["labels"])), key=_turn)
    subs = [r for r in records if "subturn" in dict(r["labels"])]
    assert len(own) == 4 and len(subs) == 3 * 2 and account.requests == 10
    keys = {dict(wire.sent[r["id"]].headers)["X-Session-Affinity"] for r in subs}
    assert keys == {"s-2/1", "s-2/2", "s-2/3"}
    # every sub-agent ran between the parent's turn 2 and turn 3, their first turns side by side
    # not timing: a causal order of one session's requests, on one clock
    assert all(own[1]["done_ns"] <= r["sent_ns"] and r["done_ns"] <= own[2]["sent_ns"] for r in subs)
    # Their first turns went out together, within the client's own work of building and sending
    # three requests (a millisecond): sub-agents run one after another would be a whole request
    # (a prefill and 12 tokens, over 150 ms) apart.
    firsts = [r for r in subs if _turn(r, "subturn") == 1]
    spread_ms = (max(r["sent_ns"] for r in firsts) - min(r["sent_ns"] for r in firsts)) / 1e6
    judge.at_most(spread_ms, 1.0, Stat.EVERY, "the sub-agents' first turns sent together")
    # and the parent's next turn carries each sub-agent's last reply
    result = _messages(wire.sent[own[2]["id"]])[-1]["content"]
    for n in (1, 2, 3):
        assert f"[sub-agent {n}]" in result
    session.close()


TOOLS = [
    {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}
]


def _trace(tmp_path: Path) -> Path:
    system = {"role": "system", "content": "You are a support agent."}
    user = [{"role": "user", "content": text} for text in ("my order", "it is late", "thanks", "hi", "bye")]
    hello = {"role": "assistant", "content": "hello"}
    delta = {"session_id": "a", "message_mode": "delta"}
    lines = [
        # an agentic (delta) session: each turn adds to a history holding the live replies
        {**delta, "messages": [system, user[0]], "output_length": 6, "timestamp": 0, "tools": TOOLS},
        {**delta, "messages": [user[1]], "output_length": 5, "delay": 150},
        {**delta, "messages": [user[2]], "output_length": 4, "delay": 0},
        # a recorded (history) session: each turn is sent exactly as recorded
        {"session_id": "b", "messages": [user[3]], "output_length": 3},
        {"session_id": "b", "messages": [user[3], hello, user[4]], "output_length": 3, "delay": 10},
    ]
    path = tmp_path / "agents.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    return path


def test_a_recorded_agent_trace_replays_with_the_servers_live_replies(
    sim: SimProcess, tmp_path: Path
) -> None:
    wire = Wire()
    session = _session(sim, tmp_path, AgentSpec(trace=str(_trace(tmp_path))), wire)
    assert [s.session_id for s in session.agent_sessions] == ["a", "b"]
    by_session = {}
    for number in range(2):  # user 0's first two sessions: one of each
        transport = session.transports.new()
        client = LLMClient(lambda **_: None, session, number, lambda t=transport: t)
        agent = Agent(session, lambda **_: None, "chat")
        account = agent.run(Seat(client, 0, f"k{number}", lambda n: "", number))
        transport.close()
        assert account.outcome == "completed"
        by_session[account.turns] = account
    assert set(by_session) == {3, 2}
    session.fold_pending()
    records = sorted(
        (
            orjson.loads(line)
            for line in (Path(session.results.path) / "requests.jsonl").read_bytes().splitlines()
        ),
        key=lambda r: r["sent_ns"],
    )
    sent = [_messages(wire.sent[r["id"]]) for r in records]
    bodies = [orjson.loads(wire.sent[r["id"]].body) for r in records]
    replies = [wire.reply(r["id"]) for r in records]
    delta = [i for i, b in enumerate(bodies) if b["messages"][0]["role"] == "system"]
    history = [i for i in range(len(records)) if i not in delta]
    assert len(delta) == 3 and len(history) == 2
    first, second, third = delta
    # turn 2 = turn 1's messages, the reply as the server streamed it, the recorded delta. Offered
    # a tool, the model called it (the call the simulator logged writing); the recording answered
    # with a user message, not the call's result, so the call is left out of the history (OpenAI
    # refuses a call without its result): the turn is spliced.
    truth = {e["client_request_id"]: e for e in sim.requests()}
    assert truth[records[first]["id"]]["tool_arguments"] is not None
    answer = sent[second][len(sent[first])]
    assert sent[second][: len(sent[first])] == sent[first]
    assert answer == {"role": "assistant", "content": replies[first]}
    assert sent[second][len(sent[first]) + 1 :] == [{"role": "user", "content": "it is late"}]
    assert by_session[3].replay is not None and by_session[2].replay is not None
    assert (by_session[3].replay.live, by_session[3].replay.spliced) == (1, 2)  # the last reply stands
    assert (by_session[2].replay.recorded, by_session[2].replay.spliced) == (2, 0)
    assert sent[third][: len(sent[second])] == sent[second] and sent[third][-1]["content"] == "thanks"
    assert all(bodies[i]["tools"] == TOOLS for i in delta)  # kept for the later turns
    assert [bodies[i]["max_tokens"] for i in delta] == [6, 5, 4]
    # the recorded delay after the first reply, before the second turn
    # not timing: a floor, which noise only lengthens
    assert records[second]["sent_ns"] - records[first]["done_ns"] >= 150e6
    # the history session went out verbatim
    hi, hello, bye = ({"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
                      {"role": "user", "content": "bye"})  # fmt: skip
    assert sent[history[1]] == [hi, hello, bye]
    session.close()


NONE = "{}"  # a spliced call's arguments: the recording holds none


def _no_call_trace(tmp_path: Path) -> Path:
    live = {"session_id": "c", "assistant_responses": "live"}
    system = {"role": "system", "content": "You are a support agent."}
    lines = [
        # the live model is told not to call a tool (the turn's own sampling fields): where the
        # recorded one called lookup, it answers in text
        {**live, "messages": [system, {"role": "user", "content": "my order"}], "output_length": 6,
         "tools": TOOLS, "extra": {"tool_choice": "none"}},
        {**live, "messages": [{"role": "tool", "tool_call_id": "rec-1", "content": "order 7: late"}],
         "output_length": 5},
        {**live, "messages": [{"role": "user", "content": "and now?"}], "output_length": 5},
        {**live, "messages": [{"role": "tool", "tool_call_id": "rec-3", "content": "order 7: shipped"}],
         "output_length": 4, "extra": {"temperature": 0}},
    ]  # fmt: skip
    path = tmp_path / "no-call.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines))
    return path


def test_a_recorded_result_after_a_live_reply_without_its_call_is_still_a_valid_conversation(
    sim: SimProcess, tmp_path: Path
) -> None:
    wire = Wire()
    session = _session(sim, tmp_path, AgentSpec(trace=str(_no_call_trace(tmp_path))), wire)
    transport = session.transports.new()
    client = LLMClient(lambda **_: None, session, 0, lambda: transport)
    account = Agent(session, lambda **_: None, "chat").run(Seat(client, 0, "k", lambda n: ""))
    transport.close()
    session.fold_pending()
    records = sorted(
        (
            orjson.loads(line)
            for line in (Path(session.results.path) / "requests.jsonl").read_bytes().splitlines()
        ),
        key=lambda r: r["sent_ns"],
    )
    truth = {e["client_request_id"]: e for e in sim.requests()}
    assert account.outcome == "completed" and [truth[r["id"]]["outcome"] for r in records] == ["ok"] * 4
    sent = [_messages(wire.sent[r["id"]]) for r in records]
    bodies = [orjson.loads(wire.sent[r["id"]].body) for r in records]
    calls = [truth[r["id"]]["tool_arguments"] for r in records]
    # turn 1 called no tool (tool_choice none, its own field); turn 2's result stands after the
    # assistant turn the recording answers: the live text with the recording's call (its id, the
    # one tool offered, no arguments recorded), so the simulator served it
    assert calls[0] is None and bodies[0]["tool_choice"] == "none" and "tool_choice" not in bodies[1]
    spliced = sent[1][-2]
    assert spliced == {
        "role": "assistant",
        "content": wire.reply(records[0]["id"]) or None,
        "tool_calls": [
            {"id": "rec-1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ],
    }
    assert sent[1][-1] == {"role": "tool", "tool_call_id": "rec-1", "content": "order 7: late"}
    # turn 3 asked after a user message, and the model called lookup: turn 4's recorded result
    # answers that call, under the call's own id, and the reply stays as the server wrote it
    assert calls[1] is None and calls[2] is not None
    (call,) = sent[3][-2]["tool_calls"]
    assert call["id"] == f"call_{truth[records[2]['id']]['id']}" and call["function"]["arguments"] == calls[2]
    assert sent[3][-1] == {"role": "tool", "tool_call_id": call["id"], "content": "order 7: shipped"}
    assert bodies[3]["temperature"] == 0 and "temperature" not in bodies[2]
    assert account.replay is not None and (account.replay.live, account.replay.spliced) == (3, 1)
    # As recorded, without the splice, turn 2 is what OpenAI refuses, and so does the simulator.
    unfitted = [*sent[0], {"role": "assistant", "content": wire.reply(records[0]["id"])}, sent[1][-1]]
    request = urllib.request.Request(
        f"{sim.url}/v1/chat/completions",
        data=orjson.dumps({"model": "m", "messages": unfitted, "max_tokens": 2}),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 400 and b"role 'tool' must answer" in refused.value.read()
    session.close()
