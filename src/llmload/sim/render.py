"""Response bodies: SSE chunks of a stream, and whole JSON bodies, in vLLM's shapes.

The per-event path is the simulator's hot path, so a ``ChunkRenderer`` pre-renders everything of a
chunk that is constant for its request (id, created, model, the JSON around the text) and an
event costs two concatenations. Output words are plain ASCII, so no JSON escaping is needed.
"""

from __future__ import annotations

import orjson

from llmload.sim.jsonvalue import JSON
from llmload.sim.tokens import VOCABULARY

DONE_EVENT = b"data: [DONE]\n\n"
LAST_CHUNK = b"0\r\n\r\n"  # the empty chunk that ends a chunked body
VOCABULARY_BYTES: tuple[bytes, ...] = tuple(w.encode() for w in VOCABULARY)


def frame(payload: bytes) -> bytes:
    """One HTTP/1.1 chunk holding ``payload`` (one or more SSE events)."""
    return b"%x\r\n%b\r\n" % (len(payload), payload)


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def final_usage(
    prompt_tokens: int, completion_tokens: int, cached_tokens: int | None, reasoning_tokens: int | None = None
) -> dict[str, JSON]:
    """The usage of a whole response: ``prompt_tokens_details.cached_tokens`` as OpenAI reports,
    and ``completion_tokens_details.reasoning_tokens`` when the model thought (OpenAI, vLLM).

    vLLM adds the details to the final usage only (with ``--enable-prompt-tokens-details``),
    never to the per-chunk usage of ``continuous_usage_stats``; so does the simulator. None
    leaves them out, as a server without a prefix cache does (and the bench harness's fixed
    payloads, which must be the same bytes for every revision they compare).
    """
    out: dict[str, JSON] = {**usage(prompt_tokens, completion_tokens)}
    if cached_tokens is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    if reasoning_tokens is not None:
        out["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return out


class ChunkRenderer:
    """Renders the SSE events of one streamed response."""

    __slots__ = (
        "_chat",
        "_continuous",
        "_first_open",
        "_head",
        "_open_close",
        "_prompt_tokens",
        "_reasoning_open",
        "_stamp",
        "_text_open",
        "_tool",
        "_usage_head",
    )

    def __init__(
        self,
        *,
        chat: bool,
        response_id: str,
        created: int,
        model: str,
        prompt_tokens: int,
        continuous_usage: bool,
        emit_timestamps: bool,
        tool: tuple[str, str] | None = None,
    ) -> None:
        """``tool``: the words are the arguments of a tool call with this (id, name)."""
        kind = b"chat.completion.chunk" if chat else b"text_completion"
        self._head = b'data: {"id":"%b","object":"%b","created":%d,"model":%b,"choices":' % (
            response_id.encode(),
            kind,
            created,
            orjson.dumps(model),
        )
        self._text_open = self._head + (
            b'[{"index":0,"delta":{"content":"' if chat else b'[{"index":0,"text":"'
        )
        self._first_open = self._text_open
        # The thinking phase of a reasoning model: vLLM's reasoning parsers stream it here.
        self._reasoning_open = self._head + b'[{"index":0,"delta":{"reasoning_content":"'
        if tool is not None:
            # The call's id, type and name come once, with its first argument tokens (vLLM).
            call_id, name = (orjson.dumps(part) for part in tool)
            self._text_open = (
                self._head + b'[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"'
            )
            self._first_open = self._head + (
                b'[{"index":0,"delta":{"tool_calls":[{"index":0,"id":%b,"type":"function",'
                b'"function":{"name":%b,"arguments":"' % (call_id, name)
            )
        self._usage_head = self._head + b'[],"usage":'
        self._prompt_tokens = prompt_tokens
        self._continuous = continuous_usage
        self._stamp = emit_timestamps
        self._chat = chat
        self._tool = tool is not None
        self._open_close = self._text_close(None)

    def _tail(self, completion_tokens: int, sent_ns: int) -> bytes:
        """What follows ``choices``: optional usage and send stamp, and the closing brace."""
        out = b""
        if self._continuous:
            out += b',"usage":' + orjson.dumps(usage(self._prompt_tokens, completion_tokens))
        if self._stamp:
            out += b',"llmload_sim":{"sent_ns":%d}' % sent_ns
        return out + b"}\n\n"

    done = DONE_EVENT  # the stream's last event

    @property
    def opens(self) -> bool:
        """Whether the stream opens with an event of its own (``role``): a chat stream does."""
        return self._chat

    def role(self, sent_ns: int, cached_tokens: int = 0) -> bytes:
        """The role-only first event of a chat stream, as vLLM sends it."""
        return (
            self._head
            + b'[{"index":0,"delta":{"role":"assistant","content":""},'
            + b'"logprobs":null,"finish_reason":null}]'
            + self._tail(0, sent_ns)
        )

    def text(
        self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int, first: bool = False
    ) -> bytes:
        """A token-bearing event; ``total_tokens`` counts the tokens sent so far, this one's too."""
        close = self._open_close if finish_reason is None else self._text_close(finish_reason)
        opening = self._first_open if first else self._text_open
        if not self._continuous and not self._stamp:
            return opening + text + close + b"}\n\n"
        return opening + text + close + self._tail(total_tokens, sent_ns)

    def reasoning(self, text: bytes, finish_reason: str | None, total_tokens: int, sent_ns: int) -> bytes:
        """A reasoning event (``delta.reasoning_content``); ``total_tokens`` as for ``text``."""
        reason = b"null" if finish_reason is None else b'"%b"' % finish_reason.encode()
        close = b'"},"logprobs":null,"finish_reason":%b}]' % reason
        return self._reasoning_open + text + close + self._tail(total_tokens, sent_ns)

    def _text_close(self, finish_reason: str | None) -> bytes:
        reason = b"null" if finish_reason is None else b'"%b"' % finish_reason.encode()
        if self._tool:
            return b'"}}]}' + b',"logprobs":null,"finish_reason":%b}]' % reason
        delta_close = b'"}' if self._chat else b'"'
        return delta_close + b',"logprobs":null,"finish_reason":%b}]' % reason

    def usage(
        self,
        completion_tokens: int,
        sent_ns: int,
        cached_tokens: int | None = None,
        reasoning_tokens: int | None = None,
        *,
        metrics: dict[str, float | None] | None = None,
        finish_reason: str = "stop",  # chat gave it with the last token; the newer APIs give it here
    ) -> bytes:
        """The final usage-only event of ``stream_options.include_usage``; vLLM puts the
        answer's per-request ``metrics`` (--enable-per-request-metrics) here, beside the usage."""
        body = orjson.dumps(
            final_usage(self._prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens)
        )
        if metrics is not None:  # vLLM writes stream chunks without their null fields
            body += b',"metrics":' + orjson.dumps({k: v for k, v in metrics.items() if v is not None})
        tail = b',"llmload_sim":{"sent_ns":%d}}\n\n' % sent_ns if self._stamp else b"}\n\n"
        return self._usage_head + body + tail

    def error(self, message: str, code: int) -> bytes:
        """An error object inside the stream, as vLLM sends when generation fails midway."""
        error = {"message": message, "type": "InternalServerError", "param": None, "code": code}
        return b"data: " + orjson.dumps({"error": error}) + b"\n\n"


def completion_body(
    *,
    chat: bool,
    response_id: str,
    created: int,
    model: str,
    text: str,
    finish_reason: str,
    prompt_tokens: int,
    completion_tokens: int,
    cached_tokens: int,
    tool: tuple[str, str] | None = None,
    reasoning: tuple[str, int] | None = None,
    metrics: dict[str, float | None] | None = None,
) -> bytes:
    """A whole non-streamed response body; with ``tool`` (id, name), ``text`` is its arguments;
    ``reasoning`` (text, tokens): the thinking, in ``message.reasoning_content`` (vLLM);
    ``metrics``: vLLM's per-request timing, a sibling of ``usage``."""
    choice: dict[str, JSON] = {"index": 0, "logprobs": None, "finish_reason": finish_reason}
    if chat:
        message: dict[str, JSON] = {"role": "assistant", "content": text, "tool_calls": []}
        if tool is not None:
            call: JSON = {"id": tool[0], "type": "function", "function": {"name": tool[1], "arguments": text}}
            message = {"role": "assistant", "content": None, "tool_calls": [call]}
        if reasoning is not None:
            message["reasoning_content"] = reasoning[0]
        choice["message"] = message
    else:
        choice["text"] = text
    return orjson.dumps(
        {
            "id": response_id,
            "object": "chat.completion" if chat else "text_completion",
            "created": created,
            "model": model,
            "choices": [choice],
            "usage": final_usage(
                prompt_tokens, completion_tokens, cached_tokens, None if reasoning is None else reasoning[1]
            ),
            **({} if metrics is None else {"metrics": metrics}),
        }
    )


def error_body(message: str, kind: str, code: int, param: str | None = None) -> bytes:
    """An OpenAI-style error body."""
    return orjson.dumps({"error": {"message": message, "type": kind, "param": param, "code": code}})
