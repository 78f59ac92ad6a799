"""``--tokenize server`` and ``auto`` against servers that answer ``/tokenize`` in either engine's
shape, or not at all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from llmload.config.asked import WorkloadConfig
from llmload.errors import TargetError
from llmload.target import tokenize
from llmload.target.tokenize import chosen, token_scale
from llmload.workload.prompts import SyntheticPrompts
from llmload.workload.scale import LONG_WORDS, SAMPLES, SHORT_WORDS, WORDS
from tests.support.rawserver import RawServer, Send
from tests.support.session import config

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def _no_decisions_of_earlier_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokenize, "_decided", {})  # what auto came to, by URL: ports are reused


def answer(status: int, body: bytes) -> list[Send]:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n"
    return [Send(head.encode() + body)]


def sample(words: int, index: int) -> str:
    return SyntheticPrompts(words, None, seed=3).get(0, index).text


@pytest.mark.parametrize("how", ["server", "auto"])
def test_llama_cpps_content_shape_is_found_after_vllms_is_answered_empty(how: str) -> None:
    # llama.cpp reads {"prompt"} as an empty content (200, no tokens); {"content"} then counts.
    # This server counts 2 tokens per word; its chat template adds 10. auto first asks it to
    # count a sentence of its own, then calibrates exactly as server does.
    words = [SHORT_WORDS] * SAMPLES + [LONG_WORDS] * SAMPLES
    probes = 1 if how == "auto" else 0

    def script(n: int) -> list[Send]:
        if n == 0:
            return answer(200, b'{"tokens": []}')
        n -= probes
        if n == 0:
            return answer(200, b'{"tokens": [7, 7]}')
        if n <= len(words):
            return answer(200, b'{"tokens": [%s]}' % b",".join([b"7"] * (2 * words[n - 1])))
        usage = b'{"prompt_tokens": %d, "completion_tokens": 1}' % (2 * SHORT_WORDS + 10)
        return answer(200, b'{"choices": [], "usage": %s}' % usage)

    with RawServer(script) as server:
        scale, warning = token_scale(how, server.url, "m", sample, headers={})
        requests = len(server.requests)
    assert warning is None
    assert (scale.per_word, scale.fixed) == (2.0, 10.0)
    assert scale.words_for(1010) == 500
    assert requests == 1 + probes + len(words) + 1  # the shapes, the counts, the template probe


def test_a_server_without_tokenize_says_what_to_give_instead() -> None:
    refusing = RawServer(lambda n: answer(404, b'{"error": "no route"}'))
    expected = r"does not tokenize .*--tokenize FILE.* or --tokenize off"
    with refusing as server, pytest.raises(TargetError, match=expected):
        token_scale("server", server.url, "m", sample, headers={})


def test_auto_without_a_tokenize_route_builds_words_and_says_nothing(tmp_path: Path) -> None:
    # An OpenAI-style gateway: no /tokenize at all. Each body shape is asked once, nothing else.
    for status in (404, 405, 501):
        with RawServer(lambda n, status=status: answer(status, b'{"error": "no"}')) as server:
            run = dataclasses.replace(
                config(tmp_path), host=server.url, workload=WorkloadConfig(tokenize="auto")
            )
            assert token_scale("auto", server.url, "m", sample, headers={}) == (WORDS, None)
            assert len(server.requests) == 2
            assert chosen(run, "m") == "off"  # this process's decision, for its summary: not asked again
            assert len(server.requests) == 2
            tokenize._decided.clear()  # a master's question: it builds no prompts of its own
            assert chosen(run, None) == "off"
            assert len(server.requests) == 4 and b'"model"' not in server.requests[2]  # none named
    # Nothing listening: the run's own requests say so, not the calibration.
    assert token_scale("auto", config(tmp_path).host, "m", sample, headers={}) == (WORDS, None)


def test_auto_where_tokenize_answers_without_a_count_says_what_to_do(tmp_path: Path) -> None:
    with RawServer(lambda n: answer(401, b'{"error": "no key"}')) as server:
        scale, warning = token_scale("auto", server.url, "m", sample, headers={})
        run = dataclasses.replace(config(tmp_path), host=server.url, workload=WorkloadConfig(tokenize="auto"))
        tokenize._decided.clear()  # the summary's question, asked by a master of its own
        assert chosen(run, "m") == "off"
    assert scale is WORDS
    assert warning is not None and "answered HTTP 401 without a token count" in warning
    assert "--tokenize FILE" in warning and "--tokenize off" in warning
