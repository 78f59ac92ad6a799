"""Request bodies for ``/v1/chat/completions``, ``/v1/completions``, ``/v1/embeddings``, the
Responses API (``/v1/responses``) and Anthropic's Messages API (``/v1/messages``).

The body is bytes because the transport writes bytes; building it with orjson costs a few
microseconds. Options are assumed validated at the edge (config), so nothing is checked here,
and nothing is read of the messages or of the extra fields: they are ``object`` values, which
orjson writes as it finds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import orjson


def chat_body(
    model: str,
    messages: Sequence[Mapping[str, object]],
    *,
    max_tokens: int | None,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None = None,
    min_tokens: int | None = None,
) -> bytes:
    """The JSON body of a chat completion request; ``extra`` keys win over ours."""
    body: dict[str, object] = {"model": model, "messages": list(messages)}
    return _dump(
        body,
        max_tokens=max_tokens,
        stream=stream,
        ignore_eos=ignore_eos,
        extra=extra,
        min_tokens=min_tokens,
    )


def completions_body(
    model: str,
    prompt: str,
    *,
    max_tokens: int | None,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None = None,
    min_tokens: int | None = None,
) -> bytes:
    """The JSON body of a legacy completions request; ``extra`` keys win over ours."""
    body: dict[str, object] = {"model": model, "prompt": prompt}
    return _dump(
        body,
        max_tokens=max_tokens,
        stream=stream,
        ignore_eos=ignore_eos,
        extra=extra,
        min_tokens=min_tokens,
    )


# Anthropic's API asks for max_tokens; this is what a request that names no limit sends.
MESSAGES_DEFAULT_MAX_TOKENS = 4096


def responses_body(
    model: str,
    messages: Sequence[Mapping[str, object]],
    *,
    max_tokens: int | None,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None = None,
    min_tokens: int | None = None,
) -> bytes:
    """A Responses API request: the conversation as ``input`` (its messages are valid input
    items), ``max_output_tokens``. Usage comes with every answer's last event, unasked."""
    body: dict[str, object] = {"model": model, "input": list(messages)}
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    return _sampling(body, stream=stream, ignore_eos=ignore_eos, extra=extra, min_tokens=min_tokens)


def messages_body(
    model: str,
    messages: Sequence[Mapping[str, object]],
    *,
    max_tokens: int | None,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None = None,
    min_tokens: int | None = None,
) -> bytes:
    """An Anthropic Messages request: system messages move to ``system``, the rest stay as
    they are (their roles and text parts are the same), ``max_tokens`` is required."""
    system = [str(m.get("content", "")) for m in messages if m.get("role") == "system"]
    body: dict[str, object] = {
        "model": model,
        "messages": [m for m in messages if m.get("role") != "system"],
        "max_tokens": MESSAGES_DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
    }
    if system:
        body["system"] = "\n\n".join(system)
    return _sampling(body, stream=stream, ignore_eos=ignore_eos, extra=extra, min_tokens=min_tokens)


def _sampling(
    body: dict[str, object],
    *,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None,
    min_tokens: int | None,
) -> bytes:
    """What the newer APIs share with chat's body but ``stream_options``: they send usage anyway."""
    body["stream"] = stream
    if min_tokens is not None:
        body["min_tokens"] = min_tokens
    if ignore_eos:
        body["ignore_eos"] = True
    if extra:
        body.update(extra)
    return orjson.dumps(body, default=_plain)


def embeddings_body(
    model: str, inputs: str | Sequence[str], *, extra: Mapping[str, object] | None = None
) -> bytes:
    """The JSON body of an ``/v1/embeddings`` request: one input or a batch of them."""
    body: dict[str, object] = {"model": model, "input": inputs if isinstance(inputs, str) else list(inputs)}
    if extra:
        body.update(extra)
    return orjson.dumps(body, default=_plain)


def rerank_body(
    model: str,
    query: str,
    documents: Sequence[str],
    *,
    top_n: int | None = None,
    extra: Mapping[str, object] | None = None,
) -> bytes:
    """The JSON body of a ``/v1/rerank`` request: a query and the documents to order by it."""
    body: dict[str, object] = {"model": model, "query": query, "documents": list(documents)}
    if top_n is not None:
        body["top_n"] = top_n
    if extra:
        body.update(extra)
    return orjson.dumps(body, default=_plain)


def _dump(
    body: dict[str, object],
    *,
    max_tokens: int | None,
    stream: bool,
    ignore_eos: bool,
    extra: Mapping[str, object] | None,
    min_tokens: int | None,
) -> bytes:
    # ``max_tokens`` rather than ``max_completion_tokens``: every OpenAI-compatible engine
    # accepts it, while the newer name is missing from older engines and gateways. Send the
    # newer one through ``extra`` where a server insists.
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if min_tokens is not None:
        body["min_tokens"] = min_tokens  # vLLM / SGLang sampling extension
    body["stream"] = stream
    if stream:
        # ``include_usage`` makes the server send the exact ``usage.completion_tokens`` in a
        # final event, so token counts are never estimated. ``continuous_usage_stats`` (vLLM,
        # SGLang) adds a cumulative usage to every chunk: exact tokens per event under
        # speculative decoding. Servers that do not know it ignore it; for one that rejects it,
        # ``extra={"stream_options": {"include_usage": True}}`` replaces this default.
        body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
    if ignore_eos:
        # Only when asked: strict OpenAI-compatible servers reject unknown parameters.
        body["ignore_eos"] = True
    if extra:
        body.update(extra)
    return orjson.dumps(body, default=_plain)


def _plain(obj: object) -> object:
    """orjson serialises dicts only; callers may hand in other mappings (frozen configs)."""
    if isinstance(obj, Mapping):
        return dict(obj)
    if isinstance(obj, Sequence) and not isinstance(obj, str | bytes):
        return list(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")
