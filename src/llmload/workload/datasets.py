"""Prompts from a dataset file: JSONL of chat messages, or ShareGPT JSON.

The format is told by the first non-blank character: ``[`` is a ShareGPT list, ``{`` a JSONL
file of ``{"messages": [{"role": ..., "content": ...}, ...], "max_tokens": 128}`` lines
(``max_tokens`` optional). Everything is read and checked once, before the run starts, so a bad
line stops the run with its line number instead of failing requests halfway through.

Output lengths: an explicit ``--max-tokens`` applies to every request. Without it, a JSONL
line's own ``max_tokens`` is used (else the server decides), and a ShareGPT conversation asks for
as many tokens as its recorded reply has words, as vLLM's benchmark does.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from llmload.errors import ConfigError
from llmload.workload.lengths import require_optional_length
from llmload.workload.prompts import Prompt

_OPTION = "--dataset"
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant"})
# ShareGPT speakers to chat roles. The public ShareGPT dumps also name replies "chatgpt" and
# "bing"; they are assistant turns like "gpt".
_SHAREGPT_ROLES = {
    "system": "system",
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "bing": "assistant",
    "assistant": "assistant",
}
_MESSAGES_HINT = 'each line must be {"messages": [{"role": "user", "content": "..."}]}'


@dataclass(frozen=True, slots=True)
class DatasetPrompts:
    """A dataset's prompts in a seeded order, which every user walks through in turn.

    User ``u`` starts at a golden-ratio spaced position, so concurrent users are spread evenly
    over the dataset instead of sending the same prompt at the same time, and each user's
    requests then follow the order, wrapping around at the end.
    """

    name: str
    prompts: tuple[Prompt, ...] = field(repr=False)  # thousands: keep reprs and logs short

    def __post_init__(self) -> None:
        if not self.prompts:
            raise ValueError("DatasetPrompts needs at least one prompt")  # load_dataset checks

    def get(self, user_index: int, request_index: int) -> Prompt:
        count = len(self.prompts)
        # (u * 2**64/phi mod 2**64) * count >> 64: the Weyl sequence frac(u/phi), scaled.
        start = (((user_index * 0x9E3779B97F4A7C15) & ((1 << 64) - 1)) * count) >> 64
        return self.prompts[(start + request_index) % count]


def load_dataset(path: str, *, max_tokens: int | None, seed: int = 0) -> DatasetPrompts:
    """Read, check and shuffle (by ``seed``) a dataset; ``ConfigError`` names what is wrong."""
    require_optional_length("--max-tokens", max_tokens)
    text = _read_text(path)
    name = Path(path).name
    stripped = text.lstrip()
    if not stripped:
        raise ConfigError(_OPTION, path, "the file is empty: give a JSONL or ShareGPT JSON file")
    if stripped.startswith("["):
        prompts = _sharegpt_prompts(text, path, name, max_tokens)
    else:
        prompts = _jsonl_prompts(text, path, name, max_tokens)
    if not prompts:
        raise ConfigError(_OPTION, path, "no usable prompts: every entry was skipped")
    # A generator local to the load: the order is fixed here, and get() only indexes it.
    random.Random(seed).shuffle(prompts)
    return DatasetPrompts(name=name, prompts=tuple(prompts))


def _read_text(path: str) -> str:
    file = Path(path).expanduser()  # environment variables do not get the shell's ~ expansion
    try:
        return file.read_text(encoding="utf-8-sig")  # -sig: a BOM would hide the first "["
    except FileNotFoundError:
        raise ConfigError(_OPTION, path, "no such file: check the path") from None
    except IsADirectoryError:
        raise ConfigError(_OPTION, path, "is a directory: give a .jsonl or .json file") from None
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text (byte {exc.start}): give a JSONL or ShareGPT JSON file"
        raise ConfigError(_OPTION, path, problem) from None
    except OSError as exc:
        raise ConfigError(_OPTION, path, f"cannot be read: {exc.strerror}") from None


def _jsonl_prompts(text: str, path: str, name: str, max_tokens: int | None) -> list[Prompt]:
    prompts = []
    # Split on "\n" only: str.splitlines also breaks at U+2028 and other separators that JSON
    # strings may hold unescaped, which would break lines and shift every line number after.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue  # blank lines, a trailing one especially, are not entries
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(_OPTION, path, f"line {lineno}: invalid JSON: {exc.msg}") from None
        prompts.append(_jsonl_prompt(entry, f"line {lineno}", path, name, max_tokens))
    return prompts


def _jsonl_prompt(entry: object, where: str, path: str, name: str, max_tokens: int | None) -> Prompt:
    if not isinstance(entry, dict) or not isinstance(entry.get("messages"), list):
        raise ConfigError(_OPTION, path, f'{where}: no "messages" list: {_MESSAGES_HINT}')
    raw: list[object] = entry["messages"]
    if not raw:
        raise ConfigError(_OPTION, path, f'{where}: "messages" is empty: {_MESSAGES_HINT}')
    messages = [
        _chat_message(message, f"{where}: message {number}", path)
        for number, message in enumerate(raw, start=1)
    ]
    own = entry.get("max_tokens")
    if own is not None and (isinstance(own, bool) or not isinstance(own, int) or own < 1):
        problem = f'{where}: "max_tokens" must be a positive whole number, not {own!r}'
        raise ConfigError(_OPTION, path, problem)
    return _prompt(messages, max_tokens if max_tokens is not None else own, name)


def _chat_message(message: object, where: str, path: str) -> dict[str, str]:
    if not isinstance(message, dict):
        raise ConfigError(_OPTION, path, f'{where}: must be {{"role": ..., "content": ...}}')
    role, content = message.get("role"), message.get("content")
    if role not in _CHAT_ROLES:
        known = ", ".join(sorted(_CHAT_ROLES))
        raise ConfigError(_OPTION, path, f"{where}: unknown role {role!r}: use one of {known}")
    if not isinstance(content, str):
        raise ConfigError(_OPTION, path, f'{where}: "content" must be a string')
    return {"role": str(role), "content": content}


def _sharegpt_prompts(text: str, path: str, name: str, max_tokens: int | None) -> list[Prompt]:
    try:
        entries = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        problem = f"line {exc.lineno} column {exc.colno}: invalid JSON: {exc.msg}"
        raise ConfigError(_OPTION, path, problem) from None
    prompts = []
    for index, entry in enumerate(entries):
        prompt = _sharegpt_prompt(entry, f"entry at index {index}", path, name, max_tokens)
        if prompt is not None:
            prompts.append(prompt)
    return prompts


def _sharegpt_prompt(
    entry: object, where: str, path: str, name: str, max_tokens: int | None
) -> Prompt | None:
    """The turns up to the first human one, or None where the conversation cannot be used.

    Unusable conversations (no human turn, an empty one, or no reply to size the output by)
    are skipped rather than refused: the public ShareGPT dumps are full of them.
    """
    turns = entry.get("conversations") if isinstance(entry, dict) else None
    if not isinstance(turns, list):
        raise ConfigError(_OPTION, path, f'{where}: no "conversations" list: not ShareGPT')
    messages: list[dict[str, str]] = []
    for number, turn in enumerate(turns, start=1):
        message = _sharegpt_message(turn, f"{where}: turn {number}", path)
        messages.append(message)
        if message["role"] == "user":
            if not message["content"].strip():
                return None
            if max_tokens is not None:
                return _prompt(messages, max_tokens, name)
            return _with_reply_length(messages, turns[number:], f"{where}: turn", path, name)
    return None


def _with_reply_length(
    messages: Sequence[dict[str, str]], rest: list[object], where: str, path: str, name: str
) -> Prompt | None:
    """The prompt asking for as many tokens as the recorded reply has words (vLLM's way)."""
    if not rest:
        return None
    reply = _sharegpt_message(rest[0], f"{where} {len(messages) + 1}", path)
    words = len(reply["content"].split())
    if reply["role"] != "assistant" or words == 0:
        return None
    return _prompt(messages, words, name)


def _sharegpt_message(turn: object, where: str, path: str) -> dict[str, str]:
    if not isinstance(turn, dict):
        raise ConfigError(_OPTION, path, f'{where}: must be {{"from": ..., "value": ...}}')
    speaker, value = turn.get("from"), turn.get("value")
    role = _SHAREGPT_ROLES.get(speaker) if isinstance(speaker, str) else None
    if role is None:
        known = ", ".join(sorted(_SHAREGPT_ROLES))
        problem = f'{where}: unknown "from" {speaker!r}: use one of {known}'
        raise ConfigError(_OPTION, path, problem)
    if not isinstance(value, str):
        raise ConfigError(_OPTION, path, f'{where}: "value" must be a string')
    return {"role": role, "content": value}


def _prompt(messages: Sequence[dict[str, str]], max_tokens: int | None, name: str) -> Prompt:
    # Completions get the contents joined by blank lines: the closest one-string form of a
    # conversation that does not assume any model's chat template.
    return Prompt(
        messages=tuple(messages),
        text="\n\n".join(message["content"] for message in messages),
        prompt_tokens_requested=None,
        max_tokens=max_tokens,
        source=name,
    )
