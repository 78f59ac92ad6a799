"""A scenario's client against the real simulator, in a plain process: what a call sends, what
its ``Reply`` says, and that every call is one measured request of the stage (record, stats,
Locust event), named as the scenario named it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from llmload.config.asked import RequestConfig, WorkloadConfig
from llmload.config.settings import PhaseConfig, RunConfig, TransportConfig
from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.core.timeouts import Timeouts
from llmload.run.llm_client import LLMClient
from llmload.run.process_run import ProcessRun
from llmload.run.reply import Reply
from llmload.sim.process import SimProcess, start_sim
from llmload.workload.messages import tool_result, user_message
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = [pytest.mark.integration]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]


class Events:
    """What the request path uses of a Locust environment: ``events.request.fire``."""

    def __init__(self) -> None:
        self.events, self.request = self, self
        self.fired: list[dict[str, Any]] = []

    def fire(self, **kwargs: Any) -> None:
        self.fired.append(kwargs)


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5", "--seed", "3"]) as process:
        yield process


@pytest.fixture
def run(sim: SimProcess, tmp_path: Path) -> Iterator[tuple[ProcessRun, LLMClient, Events]]:
    config = RunConfig(
        host=sim.url,
        request=RequestConfig(model="sim-llama-3-8b"),
        workload=WorkloadConfig(),
        phases=PhaseConfig(),
        timeouts=Timeouts(),
        transport=TransportConfig(sim.url),
        results_dir=str(tmp_path),
        run_id="run",
    )
    session = ProcessRun(config)
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), 1))
    transport = session.transports.new()
    events = Events()
    yield session, LLMClient(events.fire, session, 0, lambda: transport), events
    transport.close()
    session.close()


def by_id(sim: SimProcess, reply: Reply) -> dict[str, Any]:
    # The simulator outlives each test's session, whose request ids start again: the latest.
    return [e for e in sim.requests() if e["client_request_id"] == reply.request_id][-1]


def test_a_tool_call_and_its_follow_up(run: tuple[ProcessRun, LLMClient, Events], sim: SimProcess) -> None:
    session, client, events = run
    ask = client.chat([user_message("where is it")], max_tokens=8, tools=TOOLS, name="ask")
    assert ask.ok and ask.finish_reason in ("tool_calls", "length")
    (call,) = ask.tool_calls
    assert call.name == "lookup" and call.id
    assert set(call.parsed_arguments()) == {"query"}
    assert ask.output_tokens == by_id(sim, ask)["completion_tokens"] == 8 or ask.finish_reason == "tool_calls"
    follow = client.chat(
        [*ask.messages, tool_result(call, "42")], max_tokens=8, tools=TOOLS, name="follow-up"
    )
    assert follow.ok and follow.tool_calls == () and follow.text.split()
    assert follow.messages[-2] == {"role": "tool", "tool_call_id": call.id, "content": "42"}

    # Each call was one measured request of the stage, under its name.
    assert [e["name"] for e in events.fired] == ["ask", "follow-up"]
    stats = session.stages[0].stats
    session.fold_pending()
    assert stats.by_name is not None and set(stats.by_name) == {"ask", "follow-up"}
    assert stats.counts.records_measure == 2
    lines = (Path(session.results.path) / "requests.jsonl").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines]
    assert [r["name"] for r in records] == ["ask", "follow-up"]


SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("api", ["responses", "messages"])
def test_tool_calls_on_the_newer_apis_reassemble_as_written(
    run: tuple[ProcessRun, LLMClient, Events], sim: SimProcess, api: str, stream: bool
) -> None:
    _, client, _ = run
    if api == "responses":
        tools = [{"type": "function", "name": "lookup", "parameters": SCHEMA}]
        ask = client.responses("where is it", max_output_tokens=12, tools=tools, stream=stream)
    else:
        tools = [{"name": "lookup", "input_schema": SCHEMA}]
        ask = client.messages([user_message("where is it")], max_tokens=12, tools=tools, stream=stream)
    truth = by_id(sim, ask)
    assert ask.ok and ask.finish_reason == truth["finish_reason"] in ("tool_calls", "length"), ask
    (call,) = ask.tool_calls
    # the arguments, rebuilt from their deltas (or read from the body), are what the server wrote
    assert call.name == "lookup" and call.id and call.arguments == truth["tool_arguments"]
    assert set(call.parsed_arguments()) == {"query"}
    assert ask.output_tokens == truth["completion_tokens"]
    if api == "responses":  # the call's output goes back as an item; the model then answers in text
        output = {"type": "function_call_output", "call_id": call.id, "output": "42"}
        follow = client.responses([output], previous_response_id=ask.response_id, tools=tools, stream=stream)
    else:
        result = {"type": "tool_result", "tool_use_id": call.id, "content": "42"}
        turns = [user_message("where is it"), ask.message, {"role": "user", "content": [result]}]
        follow = client.messages(turns, max_tokens=8, tools=tools, stream=stream)
    assert follow.ok and follow.tool_calls == () and follow.text.split(), follow
    assert by_id(sim, follow)["tool_arguments"] is None


@pytest.mark.timing
def test_the_reply_carries_the_requests_own_timings(
    run: tuple[ProcessRun, LLMClient, Events], sim: SimProcess, judge: Judge
) -> None:
    _, client, _ = run
    t0 = time.perf_counter_ns()
    reply = client.chat([user_message("hi")], max_tokens=16, ignore_eos=True)
    judge.during(t0)
    judge.server(sim.stats(t0))  # a late simulator stamps the arrival late: the trip out grows
    truth = by_id(sim, reply)
    t = reply.timings
    assert reply.output_tokens == truth["completion_tokens"] == 16
    assert t.ttft_ms is not None and t.e2e_ms is not None and t.tpot_ms is not None
    # One gap per token after the first read: 15, or fewer where a busy machine read the first
    # events together (their gaps unmeasured, as in the ITL histogram); together they span the
    # decode, which ends before the request does.
    assert len(t.itl_ms) <= 15  # not timing: a count of gaps, one per token at most
    # The [DONE] may share the last token's read: equal, to float rounding.
    # not timing: one request's own stamps, added up
    assert t.ttft_ms + sum(t.itl_ms) <= t.e2e_ms * (1 + 1e-9)
    server_ttft_ms = (truth["first_token_ns"] - truth["arrival_ns"]) / 1e6
    # The client sees it later, never earlier: by the trip out and its read of the first token,
    # its own work well under a millisecond (one request, so against the largest noise). The old
    # bound's 50 ms was room for a busy machine, which the judge now measures instead.
    assert t.ttft_ms >= server_ttft_ms  # not timing: the client stamps its send first, one clock
    judge.at_most(t.ttft_ms - server_ttft_ms, 1.0, Stat.EVERY, "the reply's TTFT over the server's")
    # not timing: TPOT is the mean of the same request's ITLs, two ways
    assert t.tpot_ms == pytest.approx(sum(t.itl_ms) / len(t.itl_ms), rel=1e-6)
    assert len(reply.text.split()) == 16


def test_a_failed_check_is_a_failure_of_its_own_kind(run: tuple[ProcessRun, LLMClient, Events]) -> None:
    session, client, events = run
    reply = client.chat([user_message("hi")], max_tokens=4, check=lambda r: "wanted French", name="fr")
    assert not reply.ok and reply.outcome == "check_failed" and reply.error == "wanted French"
    assert reply.text  # the answer is still there to read
    passed = client.chat([user_message("hi")], max_tokens=4, check=lambda r: None, name="fr")
    assert passed.ok
    session.fold_pending()
    assert dict(session.stages[0].stats.outcomes) == {"check_failed": 1, "ok": 1}
    assert session.stages[0].stats.error_samples["check_failed"] == (200, "wanted French")
    assert isinstance(events.fired[0]["exception"], RuntimeError)


def test_structured_output_parses(run: tuple[ProcessRun, LLMClient, Events]) -> None:
    _, client, _ = run
    schema = {"type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}
    for stream in (True, False):
        reply = client.chat(
            [user_message("json please")],
            max_tokens=6,
            stream=stream,
            response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
        )
        answer = orjson.loads(reply.text)
        assert answer["n"] == 0 and len(answer["s"].split()) == reply.output_tokens


def test_embeddings(run: tuple[ProcessRun, LLMClient, Events], sim: SimProcess) -> None:
    session, client, _ = run
    reply = client.embeddings(["one two three", "four five"], name="embed", dimensions=8)
    assert reply.ok and [len(v) for v in reply.embeddings] == [8, 8]
    assert reply.prompt_tokens == by_id(sim, reply)["prompt_tokens"] == 5
    assert reply.output_tokens == 0 and reply.timings.ttft_ms is None and reply.timings.e2e_ms
    session.fold_pending()
    named = session.stages[0].stats.by_name
    assert named is not None and named["embed"].counts.window_prompt_tokens == 5


def test_rerank(run: tuple[ProcessRun, LLMClient, Events], sim: SimProcess) -> None:
    session, client, _ = run
    documents = ["red fox", "a quick brown fox jumps", "lazy dog sleeps", "quick brown fox"]
    reply = client.rerank("quick brown fox", documents, top_n=3, name="rank")
    assert reply.ok and [r.index for r in reply.ranking] == [3, 1, 0]  # best first, the best three
    scores = [r.score for r in reply.ranking]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0
    # the server's one count (vLLM's usage.total_tokens): 4 pairs of the query's 3 words and each document's
    assert reply.prompt_tokens == by_id(sim, reply)["prompt_tokens"] == 4 * 3 + 2 + 5 + 3 + 3
    assert reply.output_tokens == 0 and reply.timings.ttft_ms is None and reply.timings.e2e_ms
    session.fold_pending()
    named = session.stages[0].stats.by_name
    assert named is not None and named["rank"].counts.window_prompt_tokens == reply.prompt_tokens
    refused = client.rerank("", documents)
    assert not refused.ok and refused.status == 400 and "query" in (refused.error or "")


def test_an_error_answer_is_quoted_not_read(run: tuple[ProcessRun, LLMClient, Events]) -> None:
    _, client, _ = run
    reply = client.chat([user_message("hi")], max_tokens=0)  # the simulator refuses max_tokens=0
    assert reply.outcome == "http_4xx" and reply.status == 400
    assert "max_tokens" in (reply.error or "") and reply.text == ""


def test_synthetic_text_is_salted_per_call_and_apart_from_prompts(
    run: tuple[ProcessRun, LLMClient, Events],
) -> None:
    session, _, _ = run
    texts = [session.texts.get(50, 0, i) for i in range(1, 4)]
    assert all(len(t.split()) == 50 for t in texts)
    firsts = {t.split()[0] for t in texts} | {session.prompts.get(0, i).text.split()[0] for i in range(1, 4)}
    assert len(firsts) == 6  # no two share the first word a prefix cache would match


def test_max_completion_tokens_is_the_records_limit(run: tuple[ProcessRun, LLMClient, Events]) -> None:
    session, client, _ = run
    reply = client.chat([user_message("hi")], max_completion_tokens=5, ignore_eos=True)
    assert reply.output_tokens == 5
    session.fold_pending()
    (line,) = (Path(session.results.path) / "requests.jsonl").read_bytes().splitlines()
    assert orjson.loads(line)["max_tokens"] == 5
