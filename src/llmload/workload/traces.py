"""Request traces with timestamps: what production sent, and when, read into one typed form.

Three formats (docs/workloads.md, "Trace replay"):

- ``mooncake``: Mooncake's JSONL, ``{"timestamp": ms, "input_length": n, "output_length": m,
  "hash_ids": [...]}``; each hash id names one 512-token block of the prompt, so requests whose
  ids agree share that prefix;
- ``azure``: the Azure LLM inference trace CSV, ``TIMESTAMP,ContextTokens,GeneratedTokens``
  with datetimes such as ``2023-11-16 18:15:46.6805900``;
- ``jsonl``: llmload's own, ``{"t": seconds, "prompt_tokens": n | "messages": [...],
  "max_tokens": m, "session": "id"}`` (``max_tokens`` and ``session`` optional).

``auto`` tells them apart by the extension (``.csv``) and the first line's keys. Everything is
read and checked before the run starts, so a bad line stops it with its line number. Times are
made relative to the earliest entry, and entries are sorted by time (stably).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import orjson

from llmload.errors import ConfigError

TraceFormat = Literal["mooncake", "azure", "jsonl"]
# What --trace-format takes: a format, or "auto" to tell it from the file.
FormatChoice = Literal["mooncake", "azure", "jsonl", "auto"]
FORMATS: tuple[FormatChoice, ...] = ("mooncake", "azure", "jsonl", "auto")
_OPTION = "--trace"
_CHAT_ROLES = frozenset({"system", "developer", "user", "assistant"})
_AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One request of a trace. Either ``prompt_tokens`` (synthetic text of that length, built
    from ``hash_ids`` blocks where there are some) or ``messages`` (sent as they are)."""

    t_s: float  # seconds after the trace's first entry
    prompt_tokens: int | None
    max_tokens: int | None  # None: the server decides
    hash_ids: tuple[int, ...] = ()
    messages: tuple[dict[str, str], ...] | None = field(default=None, repr=False)
    session: str | None = None


@dataclass(frozen=True, slots=True)
class Trace:
    name: str  # the file's name, the prompts' source
    format: TraceFormat
    entries: tuple[TraceEntry, ...] = field(repr=False)  # sorted by t_s, the first at 0

    @property
    def span_s(self) -> float:
        return self.entries[-1].t_s


def load_trace(path: str, fmt: FormatChoice = "auto") -> Trace:
    """Read and check a trace file; ``ConfigError`` names the line and what to fix."""
    if fmt not in FORMATS:
        raise ConfigError("--trace-format", fmt, f"must be one of {', '.join(FORMATS)}")
    text = _read_text(path)
    if not text.strip():
        raise ConfigError(_OPTION, path, "the file is empty: give a Mooncake JSONL, Azure CSV or JSONL trace")
    kind: TraceFormat = detect(path, text) if fmt == "auto" else fmt
    reader = _READERS[kind]
    raw = list(reader(text, path))
    if not raw:
        raise ConfigError(_OPTION, path, f"no requests in this {kind} trace")
    raw.sort(key=lambda e: e.t_s)  # stable: entries at the same time keep the file's order
    first = raw[0].t_s
    entries = tuple(_shifted(e, first) for e in raw)
    return Trace(Path(path).name, kind, entries)


def detect(path: str, text: str) -> TraceFormat:
    """The format of ``text``: a CSV by its extension or header, JSONL by its first line's keys."""
    line = next(line for line in text.split("\n") if line.strip()).strip()
    if path.lower().endswith(".csv") or line.startswith("TIMESTAMP"):
        return "azure"
    try:
        first = orjson.loads(line)
    except orjson.JSONDecodeError:
        first = None
    if isinstance(first, dict) and "timestamp" in first:
        return "mooncake"
    if isinstance(first, dict) and "t" in first:
        return "jsonl"
    problem = (
        'cannot tell the format: the first line has no "timestamp" (Mooncake) or "t" (JSONL) key '
        "and is no Azure CSV header; give --trace-format"
    )
    raise ConfigError(_OPTION, path, problem)


def _shifted(entry: TraceEntry, first: float) -> TraceEntry:
    return dataclasses.replace(entry, t_s=entry.t_s - first)


def _read_text(path: str) -> str:
    file = Path(path).expanduser()
    try:
        return file.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(_OPTION, path, "no such file: check the path") from None
    except IsADirectoryError:
        raise ConfigError(_OPTION, path, "is a directory: give a trace file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(_OPTION, path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(_OPTION, path, f"cannot be read: {exc.strerror}") from None


def _json_lines(text: str, path: str) -> Iterator[tuple[str, dict[str, object]]]:
    # "\n" only: str.splitlines also breaks inside JSON strings at U+2028 and the like.
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(_OPTION, path, f"line {lineno}: invalid JSON: {exc.msg}") from None
        if not isinstance(entry, dict):
            raise ConfigError(_OPTION, path, f"line {lineno}: must be a JSON object")
        yield f"line {lineno}", entry


def _number(value: object, where: str, key: str, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ConfigError(_OPTION, path, f'{where}: "{key}" must be a number >= 0, not {value!r}')
    return float(value)


def _tokens(value: object, where: str, key: str, path: str) -> int:
    """A token count; 0 becomes 1, as every request asks for and sends at least one token."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(_OPTION, path, f'{where}: "{key}" must be a whole number >= 0, not {value!r}')
    return max(value, 1)


def _mooncake(text: str, path: str) -> Iterator[TraceEntry]:
    for where, e in _json_lines(text, path):
        ids = e.get("hash_ids", [])
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise ConfigError(_OPTION, path, f'{where}: "hash_ids" must be a list of integers')
        yield TraceEntry(
            _number(e.get("timestamp"), where, "timestamp", path) / 1000.0,
            _tokens(e.get("input_length"), where, "input_length", path),
            _tokens(e.get("output_length"), where, "output_length", path),
            tuple(ids),
        )


def _jsonl(text: str, path: str) -> Iterator[TraceEntry]:
    for where, e in _json_lines(text, path):
        t = _number(e.get("t"), where, "t", path)
        own = e.get("max_tokens")
        max_tokens = None if own is None else _tokens(own, where, "max_tokens", path)
        session = e.get("session")
        if session is not None and not isinstance(session, str | int):
            raise ConfigError(_OPTION, path, f'{where}: "session" must be a string or a number')
        session = None if session is None else str(session)
        if "messages" in e:
            messages = _messages(e["messages"], where, path)
            yield TraceEntry(t, None, max_tokens, messages=messages, session=session)
        elif "prompt_tokens" in e:
            tokens = _tokens(e["prompt_tokens"], where, "prompt_tokens", path)
            yield TraceEntry(t, tokens, max_tokens, session=session)
        else:
            raise ConfigError(_OPTION, path, f'{where}: give "prompt_tokens" or "messages"')


def _messages(raw: object, where: str, path: str) -> tuple[dict[str, str], ...]:
    hint = '"messages" must be a non-empty list of {"role": ..., "content": "..."}'
    if not isinstance(raw, list) or not raw:
        raise ConfigError(_OPTION, path, f"{where}: {hint}")
    out = []
    for number, message in enumerate(raw, start=1):
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in _CHAT_ROLES or not isinstance(content, str):
            known = ", ".join(sorted(_CHAT_ROLES))
            raise ConfigError(_OPTION, path, f"{where}: message {number}: {hint}, role one of {known}")
        out.append({"role": str(role), "content": content})
    return tuple(out)


def _azure(text: str, path: str) -> Iterator[TraceEntry]:
    rows = csv.reader(io.StringIO(text))
    header = [name.strip() for name in next(rows)]
    missing = [name for name in _AZURE_COLUMNS if name not in header]
    if missing:
        problem = f"line 1: an Azure trace's header needs {', '.join(_AZURE_COLUMNS)} (missing {missing})"
        raise ConfigError(_OPTION, path, problem)
    at, context, generated = (header.index(name) for name in _AZURE_COLUMNS)
    for lineno, row in enumerate(rows, start=2):
        if not row or not "".join(row).strip():
            continue
        where = f"line {lineno}"
        try:
            moment = datetime.fromisoformat(row[at].strip())
            tokens = int(row[context]), int(row[generated])
        except (ValueError, IndexError):
            example = "2023-11-16 18:15:46.68,374,44"
            problem = f"{where}: expected a datetime and two whole numbers, like {example}"
            raise ConfigError(_OPTION, path, problem) from None
        if moment.tzinfo is None:  # the trace's own clock: UTC, so no local DST shift moves it
            moment = moment.replace(tzinfo=UTC)
        yield TraceEntry(
            moment.timestamp(),
            _tokens(tokens[0], where, "ContextTokens", path),
            _tokens(tokens[1], where, "GeneratedTokens", path),
        )


_READERS: dict[TraceFormat, Callable[[str, str], Iterator[TraceEntry]]] = {
    "mooncake": _mooncake,
    "azure": _azure,
    "jsonl": _jsonl,
}
