"""Dataset prompts: JSONL and ShareGPT, seeded order, cycling, and every error the user can fix."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from llmload.errors import ConfigError
from llmload.workload.datasets import DatasetPrompts, load_dataset
from llmload.workload.prompts import Prompt, PromptSource

FIXTURES = Path(__file__).parents[2] / "fixtures" / "datasets"


def by_text(dataset: DatasetPrompts) -> dict[str, Prompt]:
    return {prompt.text: prompt for prompt in dataset.prompts}


def write_jsonl(path: Path, entries: list[object]) -> str:
    path.write_bytes(b"\n".join(orjson.dumps(entry) for entry in entries) + b"\n")
    return str(path)


def user_says(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}]}


def test_jsonl_lines_become_prompts() -> None:
    dataset = load_dataset(str(FIXTURES / "chat.jsonl"), max_tokens=None)
    prompts = by_text(dataset)
    assert len(prompts) == 3  # the blank line is not an entry
    capital = prompts["What is the capital of France?"]
    assert capital.messages == ({"role": "user", "content": "What is the capital of France?"},)
    assert capital.max_tokens is None
    assert capital.prompt_tokens_requested is None
    assert capital.source == "chat.jsonl"
    primes = prompts["You are terse.\n\nName three primes."]
    assert primes.max_tokens == 16  # the line's own length
    assert [m["role"] for m in primes.messages] == ["system", "user"]
    joke = prompts["Hi\n\nHello!\n\nTell me a joke."]
    assert [m["role"] for m in joke.messages] == ["user", "assistant", "user"]


def test_explicit_max_tokens_overrides_every_line() -> None:
    dataset = load_dataset(str(FIXTURES / "chat.jsonl"), max_tokens=64)
    assert {prompt.max_tokens for prompt in dataset.prompts} == {64}


def test_sharegpt_takes_turns_up_to_the_first_human_one() -> None:
    dataset = load_dataset(str(FIXTURES / "sharegpt.json"), max_tokens=None)
    prompts = by_text(dataset)
    # "no-human", "empty" and "no-reply" (nothing to size the output by) are skipped.
    assert set(prompts) == {"Write a haiku about rain.", "Answer in French.\n\nGood morning"}
    haiku = prompts["Write a haiku about rain."]
    assert haiku.messages == ({"role": "user", "content": "Write a haiku about rain."},)
    assert haiku.max_tokens == 10  # words in the gpt reply that follows
    french = prompts["Answer in French.\n\nGood morning"]
    assert french.messages == (
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Good morning"},
    )
    assert french.max_tokens == 1
    assert french.source == "sharegpt.json"


def test_sharegpt_with_max_tokens_needs_no_reply() -> None:
    dataset = load_dataset(str(FIXTURES / "sharegpt.json"), max_tokens=32)
    assert "Is anyone there?" in by_text(dataset)
    assert len(dataset.prompts) == 3
    assert {prompt.max_tokens for prompt in dataset.prompts} == {32}


def test_dataset_satisfies_the_protocol() -> None:
    source: PromptSource = load_dataset(str(FIXTURES / "chat.jsonl"), max_tokens=None)
    assert isinstance(source.get(0, 0), Prompt)


def test_order_is_seeded(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "many.jsonl", [user_says(f"question {i}") for i in range(50)])
    first = load_dataset(path, max_tokens=None, seed=1)
    again = load_dataset(path, max_tokens=None, seed=1)
    other = load_dataset(path, max_tokens=None, seed=2)
    assert first.prompts == again.prompts
    assert first.prompts != other.prompts
    assert sorted(p.text for p in first.prompts) == sorted(p.text for p in other.prompts)
    assert [p.text for p in first.prompts] != [f"question {i}" for i in range(50)]


def test_each_user_cycles_through_every_prompt(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "many.jsonl", [user_says(f"question {i}") for i in range(37)])
    dataset = load_dataset(path, max_tokens=None)
    for user in (0, 1, 5, 10**6):
        walk = [dataset.get(user, request).text for request in range(37)]
        assert len(set(walk)) == 37
        assert dataset.get(user, 37) == dataset.get(user, 0)  # wraps around
        assert walk == [dataset.get(user, request).text for request in range(37)]


def test_concurrent_users_start_spread_over_the_dataset(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "many.jsonl", [user_says(f"question {i}") for i in range(100)])
    dataset = load_dataset(path, max_tokens=None)
    firsts = [dataset.get(user, 0).text for user in range(20)]
    assert len(set(firsts)) == 20


def test_byte_order_mark_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "sharegpt.json").read_bytes())
    assert len(load_dataset(str(path), max_tokens=None).prompts) == 2
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes((FIXTURES / "chat.jsonl").read_bytes().replace(b"\n", b"\r\n"))
    assert len(load_dataset(str(crlf), max_tokens=None).prompts) == 3


def test_line_separators_inside_strings_do_not_shift_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "sep.jsonl"
    path.write_text(
        '{"messages": [{"role": "user", "content": "a\u2028b\u0085c"}]}\n{"broken"\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="line 2: invalid JSON"):
        load_dataset(str(path), max_tokens=None)


def problem(path: Path | str, max_tokens: int | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_dataset(str(path), max_tokens=max_tokens)
    assert caught.value.option == "--dataset"
    assert caught.value.value == str(path)
    return caught.value.problem


def test_invalid_json_names_its_line() -> None:
    assert problem(FIXTURES / "bad_line3.jsonl").startswith("line 3: invalid JSON: ")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert problem(tmp_path / "nope.jsonl").startswith("no such file")
    assert problem(tmp_path).startswith("is a directory")


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "empty.jsonl").write_bytes(content)
    assert problem(tmp_path / "empty.jsonl").startswith("the file is empty")


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "latin1.jsonl").write_bytes(b'{"messages": "caf\xe9"}\n')
    assert problem(tmp_path / "latin1.jsonl").startswith("not UTF-8 text")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[1, 2]", 'line 2: no "messages" list'),
        ('{"prompt": "hi"}', 'line 2: no "messages" list'),
        ('{"messages": "hi"}', 'line 2: no "messages" list'),
        ('{"messages": []}', 'line 2: "messages" is empty'),
        ('{"messages": ["hi"]}', "line 2: message 1: must be"),
        (
            '{"messages": [{"role": "bot", "content": "x"}]}',
            "line 2: message 1: unknown role 'bot'",
        ),
        ('{"messages": [{"content": "x"}]}', "line 2: message 1: unknown role None"),
        (
            '{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": 5}]}',
            'line 2: message 2: "content" must be a string',
        ),
        ('{"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}', "line 2: "),
        ('{"messages": [{"role": "user", "content": "x"}], "max_tokens": "9"}', "line 2: "),
        ('{"messages": [{"role": "user", "content": "x"}], "max_tokens": true}', "line 2: "),
        ("{oops", "line 2: invalid JSON: "),
    ],
)
def test_bad_jsonl_lines_name_their_line(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(orjson.dumps(user_says("fine")).decode() + "\n" + line + "\n")
    assert problem(path).startswith(expected)


def test_unknown_role_tells_the_user_the_known_ones(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"messages": [{"role": "bot", "content": "x"}]}\n')
    assert "use one of assistant, developer, system, user" in problem(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[{"conversations": []},\n {"conversations": [}]', "line 2 column"),
        ('[{"id": 1}]', 'entry at index 0: no "conversations" list'),
        ('[{"conversations": []}, 7]', 'entry at index 1: no "conversations" list'),
        ('[{"conversations": ["hi"]}]', "entry at index 0: turn 1: must be"),
        (
            '[{"conversations": [{"from": "robot", "value": "hi"}]}]',
            "entry at index 0: turn 1: unknown \"from\" 'robot'",
        ),
        (
            '[{"conversations": [{"from": "human", "value": "hi"}, {"from": "ai", "value": "x"}]}]',
            "entry at index 0: turn 2: unknown \"from\" 'ai'",
        ),
        (
            '[{"conversations": [{"from": "human", "value": ["hi"]}]}]',
            'entry at index 0: turn 1: "value" must be a string',
        ),
        ('[{"conversations": []}]', "no usable prompts"),
        ('[{"conversations": [{"from": "human", "value": "  "}]}]', "no usable prompts"),
        (
            '[{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": ""}]}]',
            "no usable prompts",
        ),
        ("[]", "no usable prompts"),
    ],
)
def test_bad_sharegpt_names_the_entry(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert problem(path).startswith(expected)


@pytest.mark.parametrize("max_tokens", [0, -1])
def test_bad_max_tokens_names_its_option(max_tokens: int) -> None:
    with pytest.raises(ConfigError) as caught:
        load_dataset(str(FIXTURES / "chat.jsonl"), max_tokens=max_tokens)
    assert caught.value.option == "--max-tokens"
