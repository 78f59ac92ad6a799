"""--agent-trace: AIPerf's session trace read into sessions, checked line by line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.errors import ConfigError
from llmload.workload.agent_trace import load_agent_trace, session_for
from tests.support.agent_traces import FILES, recorded


def _file(tmp_path: Path, *lines: object) -> str:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n\n")
    return str(path)


def test_turns_group_by_session_in_file_order(tmp_path: Path) -> None:
    user = {"role": "user", "content": "x"}
    path = _file(
        tmp_path,
        {"session_id": "s2", "message_mode": "delta", "messages": [user], "output_length": 9, "tools": []},
        {"session_id": "s1", "messages": [user], "timestamp": 40},
        {"session_id": "s2", "message_mode": "delta", "messages": [user], "delay": 1500},
    )
    s2, s1 = load_agent_trace(path)
    assert (s2.session_id, s2.delta, len(s2.turns)) == ("s2", True, 2)
    assert (s1.session_id, s1.delta, len(s1.turns)) == ("s1", False, 1)
    first, second = s2.turns
    assert (first.max_tokens, first.delay_s, first.tools) == (9, 0.0, ())
    assert (second.max_tokens, second.delay_s, second.tools) == (None, 1.5, None)
    assert load_agent_trace("") == ()


def test_users_start_at_different_sessions_and_walk_the_file(tmp_path: Path) -> None:
    user = {"role": "user", "content": "x"}
    sessions = load_agent_trace(
        _file(tmp_path, *({"session_id": str(i), "messages": [user]} for i in range(5)))
    )
    assert len({session_for(sessions, u, 0).session_id for u in range(5)}) == 5
    assert {session_for(sessions, 3, n).session_id for n in range(5)} == {str(i) for i in range(5)}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"input_length": 100, "output_length": 10}, "needs its messages"),
        ({"messages": "hi"}, "messages must be a list"),
        ({"messages": [{"role": "user"}], "message_mode": "diff"}, "must be delta or history"),
        ({"messages": [{"role": "user"}], "output_length": 0}, "output_length"),
        ({"messages": [{"role": "user"}], "delay": -1}, "delay"),
    ],
)
def test_a_bad_line_names_itself(tmp_path: Path, line: object, problem: str) -> None:
    with pytest.raises(ConfigError, match="--agent-trace") as raised:
        load_agent_trace(_file(tmp_path, line))
    assert problem in str(raised.value) and "trace.jsonl:1" in str(raised.value)


def test_a_session_may_not_mix_modes(tmp_path: Path) -> None:
    user = {"role": "user", "content": "x"}
    path = _file(
        tmp_path,
        {"session_id": "s", "messages": [user], "message_mode": "delta"},
        {"session_id": "s", "messages": [user]},
    )
    with pytest.raises(ConfigError, match="mixes delta and history"):
        load_agent_trace(path)


LIVE_NAMES = [
    ({"assistant_responses": "live"}, True),
    ({"assistant_responses": "LIVE"}, True),  # AIPerf reads it in any case
    ({"assistant_responses": "recorded"}, False),
    ({"message_mode": "delta", "assistant_responses": "Live"}, True),
    ({"message_mode": "history", "assistant_responses": "recorded"}, False),
    ({}, False),
]


@pytest.mark.parametrize(("fields", "live"), LIVE_NAMES)
def test_aiperfs_current_name_and_its_earlier_one_are_both_read(
    tmp_path: Path, fields: dict[str, str], live: bool
) -> None:
    user = {"role": "user", "content": "x"}
    (session,) = load_agent_trace(_file(tmp_path, {"session_id": "s", "messages": [user], **fields}))
    assert session.delta is live


def test_a_turns_extra_is_its_own_sampling(tmp_path: Path) -> None:
    user = {"role": "user", "content": "x"}
    live = {"session_id": "s", "assistant_responses": "live"}
    path = _file(
        tmp_path,
        {**live, "messages": [user], "extra": {"temperature": 0, "top_p": 1.0, "tool_choice": "none"}},
        {**live, "messages": [user]},
    )
    first, second = load_agent_trace(path)[0].turns
    assert first.extra == {"temperature": 0, "top_p": 1.0, "tool_choice": "none"} and second.extra is None


USER = [{"role": "user", "content": "x"}]


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ({"messages": USER, "assistant_responses": "delta"}, "'delta': must be live or recorded"),
        ({"messages": USER, "assistant_responses": 1}, "must be live or recorded"),
        ({"messages": USER, "message_mode": "delta", "assistant_responses": "recorded"}, "disagree"),
        ({"messages": USER, "temperature": 0}, "unknown field 'temperature'"),
        ({"messages": USER, "context_mode": "x"}, "say assistant_responses live or recorded"),
        ({"messages": USER, "input_length": 9}, "lengths alone replay with --trace"),
        ({"payload": {"prompt": "x"}}, "payload is not replayed here"),
        ({"messages": USER, "type": "single_turn"}, "only mooncake_trace lines"),
        ({"messages": USER, "extra": {"messages": []}}, "extra may not set 'messages'"),
        ({"messages": USER, "extra": {"max_tokens": 9}}, "output_length does"),
        ({"messages": USER, "extra": [1]}, "extra must be an object"),
        # a first turn's tool result answers no call
        ({"messages": [{"role": "tool", "tool_call_id": "c", "content": "x"}], "assistant_responses": "live"},
         "answers no call"),
    ],
)  # fmt: skip
def test_a_field_it_does_not_replay_is_refused_in_one_line(
    tmp_path: Path, line: object, problem: str
) -> None:
    with pytest.raises(ConfigError, match="--agent-trace") as raised:
        load_agent_trace(_file(tmp_path, line))
    said = str(raised.value)
    assert problem in said and "trace.jsonl:1" in said and "\n" not in said, said


def test_a_live_sessions_later_turn_may_open_with_the_results_of_the_live_reply(tmp_path: Path) -> None:
    live = {"session_id": "s", "assistant_responses": "live", "type": "mooncake_trace"}
    result = {"role": "tool", "tool_call_id": "recorded", "content": "{}"}
    (session,) = load_agent_trace(_file(tmp_path, {**live, "messages": USER}, {**live, "messages": [result]}))
    assert session.turns[1].messages == (result,)


@pytest.mark.parametrize("name", FILES)
def test_the_recorded_agent_sessions_read_whole(name: str) -> None:
    sessions = load_agent_trace(str(recorded(name)))
    lines = recorded(name).read_bytes().count(b"\n")
    assert sum(len(s.turns) for s in sessions) == lines and all(s.delta for s in sessions)
