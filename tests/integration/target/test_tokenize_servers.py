"""``--tokenize server`` against servers that answer ``/tokenize`` in either engine's shape, or not at all."""

from __future__ import annotations

import pytest

from llmload.errors import TargetError
from llmload.target.tokenize import token_scale
from llmload.workload.prompts import SyntheticPrompts
from llmload.workload.scale import LONG_WORDS, SAMPLES, SHORT_WORDS
from tests.support.rawserver import RawServer, Send

pytestmark = pytest.mark.integration


def answer(status: int, body: bytes) -> list[Send]:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return [Send(head.encode() + body)]


def sample(words: int, index: int) -> str:
    return SyntheticPrompts(words, None, seed=3).get(0, index).text


def test_llama_cpps_content_shape_is_found_after_vllms_is_answered_empty() -> None:
    # llama.cpp reads {"prompt"} as an empty content (200, no tokens); {"content"} then counts.
    # This server counts 2 tokens per word; its chat template adds 10.
    words = [SHORT_WORDS] * SAMPLES + [LONG_WORDS] * SAMPLES

    def script(n: int) -> list[Send]:
        if n == 0:
            return answer(200, b'{"tokens": []}')
        if n <= len(words):
            return answer(200, b'{"tokens": [%s]}' % b",".join([b"7"] * (2 * words[n - 1])))
        usage = b'{"prompt_tokens": %d, "completion_tokens": 1}' % (2 * SHORT_WORDS + 10)
        return answer(200, b'{"choices": [], "usage": %s}' % usage)

    with RawServer(script) as server:
        scale, warning = token_scale("server", server.url, "m", sample, headers={})
    assert warning is None
    assert (scale.per_word, scale.fixed) == (2.0, 10.0)
    assert scale.words_for(1010) == 500


def test_a_server_without_tokenize_says_what_to_give_instead() -> None:
    refusing = RawServer(lambda n: answer(404, b'{"error": "no route"}'))
    expected = r"does not tokenize .*--tokenize FILE.* or --tokenize off"
    with refusing as server, pytest.raises(TargetError, match=expected):
        token_scale("server", server.url, "m", sample, headers={})
