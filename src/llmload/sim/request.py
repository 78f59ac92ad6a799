"""Parsing one generation request body into what the simulator needs from it.

Validation follows vLLM where a client could tell the difference (``min_tokens > max_tokens`` is
a 400, ``n > 1`` is refused); everything else a real server would ignore is ignored here too.
"""

from __future__ import annotations

import zlib
from fractions import Fraction
from typing import NamedTuple

import orjson

from llmload.sim.api_request import as_chat
from llmload.sim.badrequest import BadRequest
from llmload.sim.images import ImageError, tokens_of
from llmload.sim.jsonvalue import JSON, JSONObject
from llmload.sim.shapes import Shape, answer_shape
from llmload.sim.tokens import GENERATION_PROMPT, Token, message_open, split_words
from llmload.sim.tool_results import check_tool_results

ONE = Fraction(1)

DEFAULT_MAX_TOKENS = 256
MAX_MAX_TOKENS = 1_000_000


class GenRequest(NamedTuple):
    """What one chat or completions request asks for, as received.

    A NamedTuple rather than a frozen dataclass: it is built once per request on the server's
    loop, and a tuple builds in a fraction of the time.
    """

    chat: bool  # /v1/chat/completions, else /v1/completions
    model: str | None
    stream: bool
    max_tokens: int
    min_tokens: int
    ignore_eos: bool
    include_usage: bool
    continuous_usage: bool
    prompt_tokens: int
    prompt: list[Token]  # what the prefill reads (and the prefix cache hashes); never mutated
    seed: int | None
    fault: str | None  # body field "sim_fault"
    stall_ms: int | None  # body field "sim_stall_ms"
    fault_after: int | None  # body field "sim_fault_after"
    shape: Shape | None = None  # a tool call or JSON (``shapes.py``); None: plain text
    images: int = 0  # image_url parts (their patches are in ``prompt``, ``images.py``)
    previous_response_id: str | None = None  # the Responses API's: the conversation it continues


def _int_field(body: JSONObject, name: str, default: int | None, low: int) -> int | None:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= MAX_MAX_TOKENS:
        raise BadRequest(f"{name} must be an integer in [{low}, {MAX_MAX_TOKENS}]", name)
    return value


def _seed(body: JSONObject) -> int | None:
    value = body.get("seed")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest("seed must be an integer", "seed")
    return value


def _bool_field(body: JSONObject, name: str) -> bool:
    value = body.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be a boolean", name)
    return value


def _content_tokens(content: object, per_word: Fraction) -> tuple[list[Token], int]:
    """A message content's tokens, and how many images it held: a string, or a list of parts
    whose text parts count as words and whose ``image_url`` parts as the image's patches."""
    if content is None:
        return [], 0
    if isinstance(content, str):
        return split_words(content.split(), per_word), 0
    if not isinstance(content, list):
        raise BadRequest("message content must be a string or a list of parts", "messages")
    tokens: list[Token] = []
    images = 0
    for part in content:
        if not isinstance(part, dict):
            continue
        text, image = part.get("text"), part.get("image_url")
        if isinstance(text, str):
            tokens += split_words(text.split(), per_word)
        elif part.get("type") == "image_url":
            url = image.get("url") if isinstance(image, dict) else None
            try:
                tokens += tokens_of(url if isinstance(url, str) else "")
            except ImageError as exc:
                raise BadRequest(str(exc), "messages") from None
            images += 1
    return tokens, images


def _chat_prompt(body: JSONObject, per_word: Fraction = ONE) -> tuple[list[Token], int]:
    """The chat prompt as the model reads it: template tokens, words (``tokens.py``) and
    image patches (``images.py``); and the number of images."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list", "messages")
    prompt: list[Token] = []
    images = 0
    for message in messages:
        if not isinstance(message, dict):
            raise BadRequest("each message must be an object", "messages")
        prompt += message_open(str(message.get("role")))
        tokens, n = _content_tokens(message.get("content"), per_word)
        prompt += tokens
        images += n
    prompt += GENERATION_PROMPT
    return prompt, images


def _completion_prompt(body: JSONObject, per_word: Fraction = ONE) -> list[Token]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return split_words(prompt.split(), per_word)
    if isinstance(prompt, list) and prompt:
        if all(isinstance(p, str) for p in prompt):
            return [token for p in prompt for token in split_words(p.split(), per_word)]
        ids: list[Token] = [p for p in prompt if isinstance(p, int) and not isinstance(p, bool)]
        if len(ids) == len(prompt):
            return ids  # already token ids
    raise BadRequest("prompt must be a string, a list of strings or a list of token ids", "prompt")


def _stream_options(body: JSONObject) -> tuple[bool, bool]:
    options = body.get("stream_options")
    if options is None:
        return False, False
    if not isinstance(options, dict):
        raise BadRequest("stream_options must be an object", "stream_options")
    return _bool_field(options, "include_usage"), _bool_field(options, "continuous_usage_stats")


def parse_body(
    raw: bytes, chat: bool, response_id: str = "", per_word: Fraction = ONE, api: str | None = None
) -> GenRequest:
    """Parse and validate a request body; raise ``BadRequest``. ``per_word``: prompt tokens
    per word (``--tokens-per-word``); ``api``: ``responses`` or ``messages`` for those APIs'
    bodies (``chat`` then holds: both are conversations)."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    if api is not None:
        body = as_chat(body, api)
    elif chat:  # the other APIs' conversations carry their calls in their own forms
        check_tool_results(_list(body.get("messages")))
    prompt, images = _chat_prompt(body, per_word) if chat else (_completion_prompt(body, per_word), 0)
    n = _int_field(body, "n", 1, 1)
    if n != 1:
        raise BadRequest("the simulator serves n=1 only", "n")
    limit = _int_field(body, "max_completion_tokens", None, 1)
    if limit is None:
        limit = _int_field(body, "max_tokens", DEFAULT_MAX_TOKENS, 1)
    max_tokens = DEFAULT_MAX_TOKENS if limit is None else limit
    min_tokens = _int_field(body, "min_tokens", 0, 0) or 0
    if min_tokens > max_tokens:
        raise BadRequest("min_tokens must be <= max_tokens", "min_tokens")
    stream = _bool_field(body, "stream")
    include_usage, continuous = _stream_options(body) if stream else (False, False)
    model = body.get("model")
    fault = body.get("sim_fault")
    return GenRequest(
        chat=chat,
        model=model if isinstance(model, str) else None,
        stream=stream,
        max_tokens=max_tokens,
        min_tokens=min_tokens,
        ignore_eos=_bool_field(body, "ignore_eos"),
        include_usage=include_usage,
        continuous_usage=continuous,
        prompt_tokens=len(prompt),
        prompt=prompt,
        seed=_seed(body),
        fault=fault if isinstance(fault, str) else None,
        stall_ms=_int_field(body, "sim_stall_ms", None, 0),
        fault_after=_int_field(body, "sim_fault_after", None, 0),
        shape=answer_shape(body, response_id) if chat else None,
        images=images,
        previous_response_id=_text_field(body, "previous_response_id"),
    )


def _list(value: JSON) -> list[JSON]:
    return value if isinstance(value, list) else []


def _text_field(body: JSONObject, name: str) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{name} must be a string", name)
    return value


def tokenize_answer(raw: bytes, per_word: Fraction = ONE) -> tuple[int, dict[str, JSON]]:
    """``POST /tokenize``: vLLM's and SGLang's ``{"prompt"}`` (or ``{"messages"}``, templated)
    answered ``{"count", "max_model_len", "tokens"}``; llama.cpp's ``{"content"}`` answered
    ``{"tokens"}``. Token ids are the tokens' CRC-32s: stable, and only their number matters."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(f"body is not valid JSON: {exc}") from None
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    content = body.get("content")
    if isinstance(content, str):
        tokens = split_words(content.split(), per_word)
        return 200, {"tokens": _ids(tokens)}
    if "messages" in body:
        tokens, _images = _chat_prompt(body, per_word)
    elif "prompt" in body:
        tokens = _completion_prompt(body, per_word)
    else:
        raise BadRequest("give prompt, messages or content", "prompt")
    return 200, {"count": len(tokens), "max_model_len": 131072, "tokens": _ids(tokens)}


def _ids(tokens: list[Token]) -> list[int]:
    return [t if isinstance(t, int) else zlib.crc32(t.encode()) & 0xFFFF for t in tokens]
