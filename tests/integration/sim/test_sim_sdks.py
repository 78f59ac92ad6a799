"""The official SDKs read the simulator's newer APIs: OpenAI's Responses API and Anthropic's
Messages API, streamed and not, with reasoning, as their own clients parse them."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import httpx
import openai
import orjson
import pytest

from llmload.sim.process import SimProcess, start_sim

pytestmark = pytest.mark.integration

PROMPT = "say something about load testing please"  # 6 words


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    with start_sim(
        ["--ttft-ms", "2", "--step-ms", "1", "--model", "sim-test", "--reasoning-tokens", "3"]
    ) as s:
        yield s


def test_responses_streamed_and_whole(sim: SimProcess) -> None:
    with openai.OpenAI(base_url=sim.url + "/v1", api_key="unused", max_retries=0) as api:
        events = list(
            api.responses.create(
                model="sim-test", input=PROMPT, instructions="be brief", max_output_tokens=10, stream=True,
                extra_body={"ignore_eos": True},
            )
        )  # fmt: skip
        whole = api.responses.create(
            model="sim-test", input=PROMPT, max_output_tokens=10, extra_body={"ignore_eos": True}
        )
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.incomplete"
    assert [e.sequence_number for e in events] == list(range(1, len(events) + 1))
    thought = [e.delta for e in events if e.type == "response.reasoning_text.delta"]
    answer = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert len(thought) == 3 and len(answer.split()) == 7
    usage = events[-1].response.usage
    assert usage is not None and (usage.output_tokens, usage.output_tokens_details.reasoning_tokens) == (
        10,
        3,
    )
    assert usage.input_tokens == 2 + 6 + 3 * 2 + 3  # two messages' words, 3 each, 3 to answer
    assert len(whole.output_text.split()) == 7 and whole.usage is not None and whole.usage.output_tokens == 10


def test_messages_streamed_and_whole(sim: SimProcess) -> None:
    with anthropic.Anthropic(base_url=sim.url, api_key="unused", max_retries=0) as api:
        with api.messages.stream(
            model="sim-test",
            max_tokens=10,
            system="be brief",
            messages=[{"role": "user", "content": PROMPT}],
            extra_body={"ignore_eos": True},
        ) as stream:
            events = list(stream)
            final = stream.get_final_message()
        whole = api.messages.create(
            model="sim-test", max_tokens=10, messages=[{"role": "user", "content": PROMPT}],
            extra_body={"ignore_eos": True},
        )  # fmt: skip
    assert events[0].type == "message_start" and events[-1].type == "message_stop"
    kinds = [block.type for block in final.content]
    assert kinds == ["thinking", "text"] and final.stop_reason == "max_tokens"
    assert len(final.content[1].text.split()) == 7  # type: ignore[union-attr]
    assert final.usage.output_tokens == 10
    assert [block.type for block in whole.content] == ["thinking", "text"] and whole.usage.output_tokens == 10


def test_a_messages_request_without_max_tokens_is_anthropics_400(sim: SimProcess) -> None:
    # the SDK checks this itself: sent raw, as a client of another language would
    answer = httpx.post(
        sim.url + "/v1/messages",
        json={"model": "sim-test", "messages": [{"role": "user", "content": PROMPT}]},
    )
    assert answer.status_code == 400
    assert answer.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"},
    }


def test_a_continuation_reads_the_stored_conversation_and_its_cache(sim: SimProcess) -> None:
    with openai.OpenAI(base_url=sim.url + "/v1", api_key="unused", max_retries=0) as api:
        first = api.responses.create(
            model="sim-test", input=" ".join(f"w{i}" for i in range(200)), max_output_tokens=8
        )
        then = api.responses.create(
            model="sim-test", input="and then", max_output_tokens=8, previous_response_id=first.id
        )
        with pytest.raises(openai.BadRequestError, match="not found"):
            api.responses.create(model="sim-test", input="x", previous_response_id="resp-unknown")
    assert first.usage is not None and then.usage is not None
    # the new turn (2 words, 3 template, 3 to answer) after the stored prompt and answer (3 + 8)
    assert then.usage.input_tokens == first.usage.input_tokens + 3 + 8 + 2 + 3 + 3
    # the fixed-timing simulator keeps no prefix cache: the reuse shows with the batching model
    assert then.usage.input_tokens_details.cached_tokens == 0


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_tool_calls_parse_in_both_sdks(sim: SimProcess) -> None:
    tool = {"type": "function", "name": "weather", "parameters": SCHEMA, "strict": False}
    with openai.OpenAI(base_url=sim.url + "/v1", api_key="unused", max_retries=0) as api:
        with api.responses.stream(model="sim-test", input=PROMPT, tools=[tool], max_output_tokens=12) as s:
            # the SDK's own accumulation of the call's deltas; completed or cut at the limit
            streamed = [e for e in s if e.type in ("response.completed", "response.incomplete")][-1].response
        whole = api.responses.create(model="sim-test", input=PROMPT, tools=[tool], max_output_tokens=12)
    for response in (streamed, whole):
        (call,) = [item for item in response.output if item.type == "function_call"]
        assert call.name == "weather" and set(orjson.loads(call.arguments)) == {"city"}
    with anthropic.Anthropic(base_url=sim.url, api_key="unused", max_retries=0) as claude:
        messages = [{"role": "user", "content": PROMPT}]
        spec = {"name": "weather", "input_schema": SCHEMA}
        with claude.messages.stream(model="sim-test", max_tokens=12, messages=messages, tools=[spec]) as m:
            final = m.get_final_message()  # input_json_delta parsed by the SDK
    (use,) = [block for block in final.content if block.type == "tool_use"]
    assert use.name == "weather" and set(use.input) == {"city"}  # type: ignore[arg-type]
    assert final.stop_reason in ("tool_use", "max_tokens")
