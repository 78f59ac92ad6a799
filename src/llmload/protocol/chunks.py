"""What one OpenAI-style chunk (or non-streamed response) says, reduced to what metrics need.

The single definition of a *token-bearing* event (docs/metrics.md) lives here: a choice whose delta
carries non-empty ``content``, ``reasoning_content`` / ``reasoning`` (vLLM and SGLang name the
reasoning field differently across versions), a tool-call fragment (``tool_calls``, or the
legacy ``function_call``), or, for ``/v1/completions``, non-empty ``text``. Role-only first
events, empty deltas and the usage-only final event (``choices: []``) are not token-bearing.

A streamed event is read by ``event_fields``: one typed ``msgspec`` decode that builds only the
fields below and skips the rest of the bytes (ids, model names, logprobs), about half the CPU of
``orjson.loads`` and a dict walk (docs/performance.md). Any event it does not take exactly as
declared (an error, the server's own timings, a value of another type) is read again by
``chunk_fields``, the general reading, which alone defines what an event means: the typed one
is its shortcut for the plain case, and a property test holds the two equal. Anything that is
not a JSON object of the expected shape raises ``BadChunk``, which the caller records as a
``bad_payload`` failure of the request.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec
import orjson
from msgspec import UNSET, Raw, UnsetType

from llmload.protocol.jsonvalue import JSONObject


class BadChunk(ValueError):
    """The payload is not JSON, not an object, or not shaped like an OpenAI chunk."""


class ChunkInfo(NamedTuple):
    token_bearing: bool
    has_content: bool  # non-empty ``content`` / ``text``: the first *output* (TTFOT) moment
    finish_reason: str | None  # first non-null among the choices
    completion_tokens: int | None  # from ``usage``: cumulative under continuous usage stats
    prompt_tokens: int | None
    error: str | None  # the message of an error object in the payload
    # ``usage.prompt_tokens_details.cached_tokens``: prompt tokens the server's prefix cache
    # served (vLLM, SGLang, llama.cpp and OpenAI report it on the final usage)
    cached_tokens: int | None = None
    # the server's own account of the request (llama.cpp's ``timings``: prompt_ms,
    # predicted_ms, ...), beside its usage or final chunk; None elsewhere
    timings: JSONObject | None = None
    # the delta carries reasoning text (and no ``content``): a reasoning model's thinking
    reasoning: bool = False
    # ``usage.completion_tokens_details.reasoning_tokens``: the server's count of the thinking
    # (vLLM, OpenAI); None where it sends none
    reasoning_tokens: int | None = None
    # vLLM's per-request ``metrics`` (--enable-per-request-metrics: time_to_first_token_ms,
    # queue_time_ms, ...), beside the final usage or in the body; None elsewhere
    metrics: JSONObject | None = None


_new_info = tuple.__new__  # skips the NamedTuple's Python-level __new__ on the hot path

# ``ChunkInfo``'s fields as a plain tuple, in the same order.
ChunkFields = tuple[
    bool,
    bool,
    str | None,
    int | None,
    int | None,
    str | None,
    int | None,
    JSONObject | None,
    bool,
    int | None,
    JSONObject | None,
]


def parse_chunk(data: bytes) -> ChunkInfo:
    """Read one SSE data payload of a streamed chat or completions response."""
    return _new_info(ChunkInfo, event_fields(data))


def parse_response(body: bytes) -> ChunkInfo:
    """Read a non-streamed chat (``message``) or completions (``text``) response body."""
    return _new_info(ChunkInfo, chunk_fields(body, "message"))


def chunk_fields(data: bytes, part: str = "delta") -> ChunkFields:
    """``parse_chunk`` as a plain tuple: the recorder unpacks one per event, and an exact tuple
    unpacks in one specialised instruction where a NamedTuple goes through its iterator.

    ``part`` is ``delta`` (streamed) or ``message``; completions choices carry ``text``. The
    choices are read inline on purpose: they are on every event, and a helper call would cost
    about as much as one of the lookups it wraps; the usage and the server's own timings, on
    the last chunks, have helpers of their own.
    """
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadChunk(f"invalid JSON: {exc}") from None
    if type(obj) is not dict:
        raise BadChunk(f"expected a JSON object, got {type(obj).__name__}")
    token_bearing = has_content = reasoning = False
    finish = completion = prompt = error = cached = timings = thinking = metrics = None
    try:
        choices = obj.get("choices")
        for choice in choices or ():
            delta, carried = choice.get(part), False
            if delta:
                if delta.get("content"):
                    token_bearing = has_content = carried = True
                elif delta.get("reasoning_content") or delta.get("reasoning"):
                    token_bearing = reasoning = carried = True
                elif delta.get("tool_calls") or delta.get("function_call"):  # legacy: function_call
                    token_bearing = carried = True
            if not carried and choice.get("text"):  # completions: text, where no delta carried any
                token_bearing = has_content = True
            if finish is None:
                finish = choice.get("finish_reason")
        usage = obj.get("usage")
        if usage:
            completion, prompt, cached, thinking = _usage_counts(usage)
        # Only the last chunks (a finish reason, or usage alone): under continuous usage every
        # chunk has usage, and the two look-ups would cost every event.
        if finish is not None or (usage and not choices):
            timings, metrics = _server_own(obj)
        # Error objects carry no tokens: skipping the check for token-bearing events keeps
        # two lookups off the common path.
        if not token_bearing and ("error" in obj or obj.get("object") == "error"):
            error = _error(obj)
    except (AttributeError, TypeError) as exc:
        # A field of the wrong JSON type (a string where an object belongs, ...): the payload
        # is malformed, which is the server's fault and a data point, not our bug.
        raise BadChunk(f"unexpected chunk shape: {exc}") from None
    if finish is not None and type(finish) is not str:
        raise BadChunk(f"unexpected types: finish_reason={finish!r}")
    return (token_bearing, has_content, finish, completion, prompt, error, cached, timings, reasoning,
            thinking, metrics)  # fmt: skip


def _usage_counts(usage: Any) -> tuple[int | None, int | None, int | None, int | None]:
    """A chunk's usage: completion, prompt, cached and reasoning tokens (a usage object is on
    the last chunk, or on every chunk under continuous usage stats). ``usage`` is orjson's, of
    any JSON type: a wrong one raises AttributeError, which the caller calls a bad chunk."""
    completion, prompt = usage.get("completion_tokens"), usage.get("prompt_tokens")
    cached = thinking = None
    details = usage.get("prompt_tokens_details")
    if details:
        cached = details.get("cached_tokens")
    details = usage.get("completion_tokens_details")
    if details:
        thinking = details.get("reasoning_tokens")
    for count in (completion, prompt, cached, thinking):
        if count is not None and type(count) is not int:
            raise BadChunk(f"unexpected types: usage={usage!r}")
    return completion, prompt, cached, thinking


def _server_own(obj: dict[str, Any]) -> tuple[JSONObject | None, JSONObject | None]:
    """What a server says of its own timing on a last chunk: llama.cpp's ``timings``, and
    ``metrics`` where an engine sends them."""
    timings, metrics = obj.get("timings"), obj.get("metrics")
    return (timings if type(timings) is dict else None), (metrics if type(metrics) is dict else None)


def _error(obj: JSONObject) -> str | None:
    """The message of ``{"error": {...}}``, ``{"error": "..."}`` or vLLM's ``object: error``."""
    err = obj.get("error")
    if err is None:
        if obj.get("object") != "error":
            return None
        err = obj
    if isinstance(err, str):
        return err or "error"
    if isinstance(err, dict):
        message = err.get("message")
        if isinstance(message, str) and message:
            return message
    # An error object without a usable message is still an error: keep what it said.
    return orjson.dumps(err).decode("utf-8", "replace")


# -- the typed shortcut for plain streamed events ------------------------------------------------
# Only what ``chunk_fields`` reads of a plain event is declared; msgspec skips everything else
# without building it. ``gc=False``: decoded JSON holds no cycles, so the collector need not
# track these objects (one event makes four or five of them).


class _Delta(msgspec.Struct, gc=False):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[Raw] | None = None
    function_call: dict[str, Raw] | None = None


class _Choice(msgspec.Struct, gc=False):
    delta: _Delta | None = None
    text: str | None = None
    finish_reason: str | None = None


class _PromptDetails(msgspec.Struct, gc=False):
    cached_tokens: int | None = None


class _CompletionDetails(msgspec.Struct, gc=False):
    reasoning_tokens: int | None = None


class _Usage(msgspec.Struct, gc=False):
    completion_tokens: int | None = None
    prompt_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None
    completion_tokens_details: _CompletionDetails | None = None


class _Event(msgspec.Struct, gc=False):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    object: str | None = None
    # Present in rare events only; any of them sends the event to the general reading.
    error: Raw | UnsetType = UNSET
    timings: Raw | UnsetType = UNSET
    metrics: Raw | UnsetType = UNSET


_decode_event = msgspec.json.Decoder(_Event).decode


def event_fields(data: bytes) -> ChunkFields:
    """``chunk_fields`` of one streamed event, by the typed shortcut where the event is plain."""
    try:
        event = _decode_event(data)
    except msgspec.DecodeError:  # not JSON, or not of the declared shape: the general reading says
        return chunk_fields(data)
    if (
        event.error is not UNSET
        or event.timings is not UNSET
        or event.metrics is not UNSET
        or event.object == "error"
    ):
        return chunk_fields(data)
    token_bearing = has_content = reasoning = False
    finish = completion = prompt = cached = thinking = None
    choices = event.choices
    for choice in choices or ():
        delta, carried = choice.delta, False
        if delta is not None:
            if delta.content:
                token_bearing = has_content = carried = True
            elif delta.reasoning_content or delta.reasoning:
                token_bearing = reasoning = carried = True
            elif delta.tool_calls or delta.function_call:
                token_bearing = carried = True
        if not carried and choice.text:
            token_bearing = has_content = True
        if finish is None:
            finish = choice.finish_reason
    usage = event.usage
    if usage is not None:
        completion, prompt = usage.completion_tokens, usage.prompt_tokens
        if usage.prompt_tokens_details is not None:
            cached = usage.prompt_tokens_details.cached_tokens
        if usage.completion_tokens_details is not None:
            thinking = usage.completion_tokens_details.reasoning_tokens
    return (token_bearing, has_content, finish, completion, prompt, None, cached, None, reasoning,
            thinking, None)  # fmt: skip
