"""A read of one whole event takes the recorder's one-event path, any other read its loop: the
two must make the same record of the same events, whatever they are."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.core.recorder import ResponseRecorder
from llmload.core.timeouts import Timeouts

MS = 1_000_000


def _event(payload: Any) -> bytes:
    return orjson.dumps(payload)


_usage = st.fixed_dictionaries(
    {"prompt_tokens": st.integers(0, 50), "completion_tokens": st.integers(0, 50)},
    optional={"prompt_tokens_details": st.fixed_dictionaries({"cached_tokens": st.integers(0, 5)}),
              "completion_tokens_details": st.fixed_dictionaries({"reasoning_tokens": st.integers(0, 5)})},
)  # fmt: skip
_delta = st.sampled_from(
    [
        {"content": "a"},
        {"content": ""},
        {"role": "assistant"},
        {"reasoning_content": "r"},
        {"tool_calls": [{}]},
    ]
)
_chunk = st.builds(
    lambda d, finish, usage: _event(
        {
            "choices": [{"index": 0, "delta": d, "finish_reason": finish}],
            **({"usage": usage} if usage else {}),
        }
    ),
    _delta,
    st.sampled_from([None, None, None, "stop"]),
    st.one_of(st.none(), _usage),
)
_payloads = st.lists(
    st.one_of(
        _chunk,
        _chunk,
        _chunk,
        st.builds(lambda u: _event({"choices": [], "usage": u}), _usage),
        st.just(_event({"choices": [], "timings": {"prompt_ms": 1.5, "predicted_ms": 9.0}})),
        st.just(_event({"choices": [], "metrics": {"queue_time_ms": 0.5}})),
        st.just(_event({"error": {"message": "boom"}})),
        st.just(b"{not json"),
        st.just(b"[DONE]"),
    ),
    max_size=12,
)


def _record(payloads: list[bytes], prefix: bytes) -> dict[str, Any]:
    record = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=0)
    recorder = ResponseRecorder(record, Timeouts())
    recorder.on_sent(0)
    recorder.on_headers(MS, 200, {})
    t = MS
    for data in payloads:
        t += MS
        if recorder.on_data(t, prefix + b"data: " + data + b"\n\n"):
            break
    return recorder.finish(t + MS).to_json()


@given(_payloads)
def test_one_event_per_read_makes_the_record_the_loop_makes(payloads: list[bytes]) -> None:
    # A comment line before the event (ignored by SSE) sends the same read through the loop.
    assert _record(payloads, b"") == _record(payloads, b": ping\n")
