"""The official ``openai`` SDK talks to the simulator: chat and completions, streamed and not."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import openai
import pytest

from llmload.sim.process import SimProcess, start_sim

pytestmark = pytest.mark.integration

PROMPT = "say something about load testing please"  # 6 words


@pytest.fixture(scope="module")
def client() -> Iterator[tuple[openai.OpenAI, SimProcess]]:
    sim = start_sim(["--ttft-ms", "2", "--step-ms", "1", "--model", "sim-test"])
    with openai.OpenAI(base_url=sim.url + "/v1", api_key="unused", max_retries=0) as api:
        yield api, sim
    sim.stop()


def test_models(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    assert [m.id for m in api.models.list()] == ["sim-test"]


def test_chat_non_streamed(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    reply = api.chat.completions.create(
        model="sim-test",
        messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": PROMPT}],
        max_tokens=12,
        extra_body={"ignore_eos": True},
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "length"
    assert choice.message.role == "assistant"
    assert len((choice.message.content or "").split()) == 12
    assert reply.usage is not None
    assert reply.usage.completion_tokens == 12
    assert reply.usage.prompt_tokens == 2 + 6 + 3 * 2 + 3  # words + 3 per message + 3


def test_chat_streamed_with_usage(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    stream = api.chat.completions.create(
        model="sim-test",
        messages=[{"role": "user", "content": PROMPT}],
        max_completion_tokens=10,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[0].choices[0].delta.content == ""
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(text.split()) == 10
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finish == ["length"]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (12, 10)


def test_completions_non_streamed(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    reply = api.completions.create(
        model="sim-test", prompt=PROMPT, max_tokens=7, extra_body={"ignore_eos": True}
    )
    assert len(reply.choices[0].text.split()) == 7
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (6, 7)


def test_completions_streamed(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    stream = api.completions.create(
        model="sim-test",
        prompt=PROMPT,
        max_tokens=9,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"ignore_eos": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].text for c in chunks if c.choices)
    assert len(text.split()) == 9
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 9


def test_eos_stops_early_without_ignore_eos(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    reasons = set()
    for i in range(20):
        reply = api.chat.completions.create(
            model="sim-test",
            messages=[{"role": "user", "content": f"{PROMPT} {i}"}],
            max_tokens=20,
            extra_body={"min_tokens": 3},
        )
        choice = reply.choices[0]
        assert reply.usage is not None
        n = reply.usage.completion_tokens
        assert 3 <= n <= 20
        assert (choice.finish_reason == "length") == (n == 20)
        reasons.add(choice.finish_reason)
    assert reasons == {"stop", "length"}


def test_errors_reach_the_sdk_as_its_exceptions(client: tuple[openai.OpenAI, SimProcess]) -> None:
    api, _ = client
    with pytest.raises(openai.RateLimitError):
        api.chat.completions.create(
            model="sim-test",
            messages=[{"role": "user", "content": PROMPT}],
            extra_headers={"x-sim-fault": "http_429"},
        )
    with pytest.raises(openai.BadRequestError):
        api.chat.completions.create(
            model="sim-test", messages=[{"role": "user", "content": PROMPT}], max_tokens=0
        )


def test_an_api_key_guards_the_v1_routes_only() -> None:
    """As vLLM's --api-key: the SDK without the key is refused, with it served; /health stays open."""
    sim = start_sim(["--ttft-ms", "2", "--step-ms", "1", "--model", "sim-test", "--api-key", "sk-sim"])
    try:
        with (
            openai.OpenAI(base_url=sim.url + "/v1", api_key="wrong", max_retries=0) as api,
            pytest.raises(openai.AuthenticationError),
        ):
            api.models.list()
        with openai.OpenAI(base_url=sim.url + "/v1", api_key="sk-sim", max_retries=0) as api:
            assert [m.id for m in api.models.list()] == ["sim-test"]
        with httpx.Client() as http:
            assert http.get(sim.url + "/health").status_code == 200
    finally:
        sim.stop()
