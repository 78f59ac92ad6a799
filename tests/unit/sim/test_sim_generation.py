"""One generation's events on the wire: framing, chunk shapes, one write per step, faults."""

from __future__ import annotations

import json

import pytest
from sim_fakes import FakeConnection

from llmload.sim.faults import FaultMode, FaultyGeneration
from llmload.sim.generation import Generation, ResponseInfo
from llmload.sim.render import ChunkRenderer
from llmload.sim.tokens import OutputPlan, TokenText
from llmload.sim.truth import Truth


def _generation(
    tokens: int,
    *,
    k: int = 1,
    chat: bool = True,
    stream: bool = True,
    usage: bool = True,
    continuous: bool = False,
    stamps: bool = False,
    cls: type[Generation] = Generation,
) -> tuple[Generation, FakeConnection, Truth]:
    truth = Truth()
    conn = FakeConnection()
    info = ResponseInfo(chat, "chatcmpl-sim-1", 1700000000, "m", 9, usage, (("server", "x"),))
    renderer = None
    if stream:
        renderer = ChunkRenderer(
            chat=chat,
            response_id=info.response_id,
            created=info.created,
            model="m",
            prompt_tokens=9,
            continuous_usage=continuous,
            emit_timestamps=stamps,
        )
    entry = truth.begin(id=info.response_id, client="c", path="/p", stream=stream, arrival_ns=1)
    generation = cls(
        info=info,
        plan=OutputPlan(tokens, "length"),
        text=TokenText(0, 1),
        tokens_per_chunk=k,
        renderer=renderer,
        entry=entry,
        conn=conn.as_connection(),
        truth=truth,
    )
    return generation, conn, truth


def _run(generation: Generation) -> int:
    steps = 0
    while not generation.step(10**12 + steps):
        steps += 1
    return steps + 1


def _events(write: bytes) -> list[str]:
    size, _, rest = write.partition(b"\r\n")
    payload = rest[: int(size, 16)]
    assert rest[int(size, 16) :].startswith(b"\r\n")
    return [e.removeprefix("data: ") for e in payload.decode().split("\n\n") if e]


def test_one_write_per_step_and_vllm_shapes() -> None:
    generation, conn, truth = _generation(3)
    assert _run(generation) == 3
    assert len(conn.writes) == 3
    first, middle, last = (_events(w) for w in conn.writes)
    role, token = (json.loads(e) for e in first)
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert token["choices"][0]["delta"]["content"].startswith(" ")
    assert json.loads(middle[0])["choices"][0]["finish_reason"] is None
    final, usage, done = last
    assert json.loads(final)["choices"][0]["finish_reason"] == "length"
    assert json.loads(usage) == {
        "id": "chatcmpl-sim-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 3,
            "total_tokens": 12,
            "prompt_tokens_details": {"cached_tokens": 0},
        },
    }
    assert done == "[DONE]"
    assert conn.writes[-1].endswith(b"0\r\n\r\n")
    assert conn.ended == "finish"
    assert (truth.tokens_written_total, truth.events_written_total) == (3, 3)
    entry = truth.entries[0]
    assert (entry.completion_tokens, entry.events, entry.outcome) == (3, 3, "ok")


def test_tokens_per_chunk() -> None:
    generation, conn, truth = _generation(10, k=4, usage=False)
    _run(generation)
    texts = [
        json.loads(_events(w)[-2 if i == 3 else -1])["choices"][0]["delta"]["content"]
        for i, w in enumerate(conn.writes)
    ]
    assert [len(t.split()) for t in texts] == [1, 4, 4, 1]
    assert (truth.drafts_total, truth.draft_tokens_total, truth.accepted_tokens_total) == (3, 9, 6)


def test_completions_have_text_and_no_role_chunk() -> None:
    generation, conn, _ = _generation(2, chat=False, usage=False)
    _run(generation)
    first = _events(conn.writes[0])
    assert len(first) == 1
    chunk = json.loads(first[0])
    assert chunk["object"] == "text_completion"
    assert chunk["choices"][0]["text"].startswith(" ")


def test_continuous_usage_and_timestamps() -> None:
    generation, conn, _ = _generation(2, continuous=True, stamps=True, usage=False)
    _run(generation)
    chunks = [json.loads(e) for w in conn.writes for e in _events(w) if e != "[DONE]"]
    assert [c["usage"]["completion_tokens"] for c in chunks] == [0, 1, 2]
    assert all(c["llmload_sim"]["sent_ns"] > 0 for c in chunks)


def test_cached_tokens_are_in_the_final_usage_and_the_ground_truth() -> None:
    streamed, conn, truth = _generation(3, continuous=True)
    streamed.cached_tokens = 16  # what an engine sets at admission
    _run(streamed)
    chunks = [json.loads(e) for w in conn.writes for e in _events(w) if e != "[DONE]"]
    # As vLLM: the per-chunk usage of continuous_usage_stats has no details, the final one has.
    assert all("prompt_tokens_details" not in c["usage"] for c in chunks[:-1])
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["prompt_tokens_details"] == {"cached_tokens": 16}
    assert truth.entries[0].cached_tokens == 16 and truth.entries[0].as_json()["cached_tokens"] == 16
    whole, conn, truth = _generation(2, stream=False)
    whole.cached_tokens = 8
    _run(whole)
    body = json.loads(conn.writes[0].removeprefix(b"200 "))
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 8}
    assert truth.entries[0].cached_tokens == 8


def test_non_streamed_body_is_written_once_at_the_end() -> None:
    generation, conn, truth = _generation(4, stream=False)
    _run(generation)
    (write,) = conn.writes
    body = json.loads(write.removeprefix(b"200 "))
    assert len(body["choices"][0]["message"]["content"].split()) == 4
    assert body["usage"]["completion_tokens"] == 4
    assert truth.entries[0].events == 0 and truth.tokens_written_total == 4


def test_disconnect_is_logged_once_as_cancelled() -> None:
    generation, _, truth = _generation(10)
    generation.step(1)
    generation.on_disconnect()
    generation.on_disconnect()
    assert generation.step(2) is True
    (entry,) = truth.entries
    assert (entry.outcome, entry.completion_tokens) == ("cancelled", 1)


@pytest.mark.parametrize(
    ("mode", "ended"),
    [
        (FaultMode.RESET_MID_STREAM, "reset"),
        (FaultMode.CLOSE_MID_BODY, "close"),
        (FaultMode.BAD_FRAMING, "close"),
        (FaultMode.ERROR_EVENT, "finish"),
        (FaultMode.BAD_JSON, "finish"),
    ],
)
def test_mid_stream_faults_fire_at_their_event(mode: FaultMode, ended: str) -> None:
    generation, conn, truth = _generation(8, cls=FaultyGeneration)
    assert isinstance(generation, FaultyGeneration)
    generation.entry.outcome = f"fault:{mode.value}"
    generation.arm(mode, 3, None)
    _run(generation)
    assert conn.ended == ended
    assert truth.entries[0].outcome == f"fault:{mode.value}"
    if mode is not FaultMode.BAD_JSON:
        assert truth.entries[0].events == 3


def test_stall_mid_holds_the_stream() -> None:
    generation, conn, _ = _generation(4, cls=FaultyGeneration)
    assert isinstance(generation, FaultyGeneration)
    generation.arm(FaultMode.STALL_MID, 2, 5)
    for now in (1, 2, 3):
        generation.step(now)
    assert len(conn.writes) == 2
    assert generation.hold_until_ns == 3 + 5_000_000
    generation.step(4)
    assert len(conn.writes) == 2
    assert generation.step(5_000_003) is False
    assert len(conn.writes) == 3


def test_close_no_done_ends_the_body_without_done() -> None:
    generation, conn, _ = _generation(3, cls=FaultyGeneration, usage=False)
    assert isinstance(generation, FaultyGeneration)
    generation.arm(FaultMode.CLOSE_NO_DONE, None, None)
    _run(generation)
    assert b"[DONE]" not in b"".join(conn.writes)
    assert conn.writes[-1].endswith(b"0\r\n\r\n")


@pytest.mark.parametrize(
    ("api", "first", "last"),
    [("responses", "response.created", "response.incomplete"), ("messages", "message_start", "message_stop")],
)
def test_a_slow_drip_on_the_newer_apis_writes_their_own_events(api: str, first: str, last: str) -> None:
    from llmload.sim.completions import drip_bytes

    truth = Truth()
    info = ResponseInfo(True, "resp-sim-1", 1700000000, "m", 9, True, (("server", "x"),), api=api)
    entry = truth.begin(id=info.response_id, client="c", path="/p", stream=True, arrival_ns=1)
    generation = Generation(
        info=info, plan=OutputPlan(4, "length"), text=TokenText(0, 1), tokens_per_chunk=1, renderer=None,
        entry=entry, conn=FakeConnection().as_connection(), truth=truth,
    )  # fmt: skip
    data = drip_bytes(generation, True, keep_alive=False)
    events = [line.split(b" ", 1)[1] for line in data.split(b"\n") if line.startswith(b"event: ")]
    assert events[0].decode() == first and events[-1].decode() == last
    assert b"[DONE]" not in data and b"chat.completion" not in data
