"""--agent-trace: AIPerf's session trace read into sessions, checked line by line."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.errors import ConfigError
from llmload.workload.agent_trace import load_agent_trace, session_for


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
