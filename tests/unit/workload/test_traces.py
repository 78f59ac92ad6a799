"""Trace files: the three formats read into one form, told apart by auto, bad lines named."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.errors import ConfigError
from llmload.workload.traces import load_trace

AZURE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:47.1805900,879,0
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def jsonl(*entries: object) -> str:
    return "".join(orjson.dumps(e).decode() + "\n" for e in entries)


def test_mooncake_lines_become_entries_in_seconds_with_their_blocks(tmp_path: Path) -> None:
    text = jsonl(
        {"timestamp": 0, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]},
        {"timestamp": 1500, "input_length": 100, "output_length": 3, "hash_ids": [46]},
    )
    trace = load_trace(write(tmp_path, "mooncake_trace.jsonl", text))
    assert trace.format == "mooncake" and trace.name == "mooncake_trace.jsonl"
    first, second = trace.entries
    assert (first.t_s, first.prompt_tokens, first.max_tokens, first.hash_ids) == (0.0, 6955, 52, (46, 47))
    assert (second.t_s, second.hash_ids) == (1.5, (46,))


def test_azure_csv_times_are_seconds_after_the_first_sorted(tmp_path: Path) -> None:
    trace = load_trace(write(tmp_path, "AzureLLMInferenceTrace_conv.csv", AZURE))
    assert trace.format == "azure"
    assert [round(e.t_s, 6) for e in trace.entries] == [0.0, 0.5, 4.314579]
    assert [(e.prompt_tokens, e.max_tokens) for e in trace.entries] == [(374, 44), (879, 1), (396, 109)]
    assert trace.span_s == pytest.approx(4.314579)


def test_llmload_jsonl_takes_prompt_tokens_or_messages_and_sessions(tmp_path: Path) -> None:
    text = jsonl(
        {"t": 2.0, "prompt_tokens": 50, "max_tokens": 8, "session": "a"},
        {"t": 2.5, "messages": [{"role": "user", "content": "hi"}]},
        {"t": 3.0, "prompt_tokens": 90, "session": 7},
    )
    trace = load_trace(write(tmp_path, "mine.jsonl", text), "auto")
    assert trace.format == "jsonl"
    a, b, c = trace.entries
    assert (a.t_s, a.prompt_tokens, a.max_tokens, a.session) == (0.0, 50, 8, "a")
    assert b.messages == ({"role": "user", "content": "hi"},) and b.prompt_tokens is None
    assert b.max_tokens is None and (c.session, c.t_s) == ("7", 1.0)


def test_an_explicit_format_overrides_detection(tmp_path: Path) -> None:
    path = write(tmp_path, "trace.txt", AZURE)
    assert load_trace(path, "azure").format == "azure"
    with pytest.raises(ConfigError, match="line 1: invalid JSON"):
        load_trace(path, "mooncake")


MOONCAKE_LINE = '{"timestamp": 0, "input_length": %s, "output_length": 2, "hash_ids": %s}\n'
AZURE_HEAD = "TIMESTAMP,ContextTokens,GeneratedTokens\n"


@pytest.mark.parametrize(
    ("name", "text", "match"),
    [
        ("m.jsonl", MOONCAKE_LINE % (-1, "[]"), "line 1: .input_length. must be"),
        ("m.jsonl", MOONCAKE_LINE % (5, '"x"'), "hash_ids"),
        ("m.jsonl", '{"t": 0}\n{"t": 1, "prompt_tokens": 3}\n', 'line 1: give "prompt_tokens" or "messages"'),
        ("m.jsonl", '{"t": 0, "messages": [{"role": "bot", "content": "x"}]}\n', "message 1"),
        ("m.jsonl", '{"x": 1}\n', "cannot tell the format.*--trace-format"),
        ("a.csv", "TIMESTAMP,ContextTokens\n", "GeneratedTokens"),
        ("a.csv", AZURE_HEAD + "yesterday,1,2\n", "line 2: expected a datetime"),
        ("m.jsonl", "\n\n", "empty"),
    ],
)
def test_bad_traces_name_the_line_and_the_fix(tmp_path: Path, name: str, text: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_trace(write(tmp_path, name, text))


def test_an_unknown_format_names_the_formats(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--trace-format.*mooncake, azure, jsonl, auto"):
        load_trace(write(tmp_path, "m.jsonl", '{"t": 0, "prompt_tokens": 3}\n'), "csv")


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--trace.*no such file"):
        load_trace(str(tmp_path / "nope.jsonl"))
