"""Conversations: history growth, turn labels, token counts under the simulator's rule, think time."""

from __future__ import annotations

import itertools
import statistics

import pytest

from llmload.errors import ConfigError
from llmload.protocol.payloads import chat_body, completions_body
from llmload.sim.request import parse_body
from llmload.workload.conversations import MAX_TURNS, Conversation, ConversationSpec
from llmload.workload.datasets import DatasetPrompts
from llmload.workload.lengths import Uniform
from llmload.workload.prefixes import PrefixSpec, SharedPrefixes
from llmload.workload.prompts import Prompt, PromptSource, SyntheticPrompts


def sim_prompt_tokens(prompt: Prompt, chat: bool = True) -> int:
    """What the simulator counts for this prompt (words + template): its own parser."""
    if chat:
        body = chat_body("m", prompt.messages, max_tokens=8, stream=True, ignore_eos=True)
    else:
        body = completions_body("m", prompt.text, max_tokens=8, stream=True, ignore_eos=True)
    return parse_body(body, chat).prompt_tokens


def converse(source: PromptSource, replies: list[int], user: int = 0) -> list[Prompt]:
    """The prompts of one conversation whose turns got ``replies`` output tokens each."""
    conversation, sent = Conversation(), []
    for request, reply in enumerate(replies):
        prompt = conversation.ask(source.get(user, request))
        sent.append(prompt)
        conversation = conversation.answered(prompt, reply)
    return sent


def test_history_grows_by_one_exchange_per_turn() -> None:
    turns = converse(SyntheticPrompts(10, 16), [16, 16, 16, 16])
    assert [len(p.messages) for p in turns] == [1, 3, 5, 7]
    for earlier, later in itertools.pairwise(turns):
        assert later.messages[: len(earlier.messages)] == earlier.messages  # the prefix repeats
        assert later.messages[len(earlier.messages)]["role"] == "assistant"
        assert later.messages[-1]["role"] == "user"
    assert [dict(p.labels)["turn"] for p in turns] == ["1", "2", "3", "4"]


def test_on_the_servers_state_a_later_turn_sends_only_its_message_and_the_same_count() -> None:
    source = SyntheticPrompts(10, 16)
    resent = converse(source, [16, 16, 16])
    conversation, stateful = Conversation(), []
    for request in range(3):
        prompt = conversation.ask(source.get(0, request))
        stateful.append(prompt)
        conversation = conversation.answered(prompt, 16, response_id=f"resp-{request}")
    assert [len(p.messages) for p in stateful] == [1, 1, 1]
    for kept, sent in zip(stateful, resent, strict=True):
        # the new message is the resent turn's last; the server counts the whole conversation
        assert kept.messages[-1] == sent.messages[-1]
        assert kept.prompt_tokens_requested == sent.prompt_tokens_requested
    assert conversation.history == (*resent[-1].messages, conversation.history[-1])
    assert conversation.response_id == "resp-2"


def test_requested_and_simulator_tokens_follow_the_history() -> None:
    # Fixed 10-word messages, 16-token replies: turn n has n user and n-1 assistant messages.
    turns = converse(SyntheticPrompts(10, 16), [16] * 5)
    for n, prompt in enumerate(turns, start=1):
        words = 10 * n + 16 * (n - 1)
        assert prompt.prompt_tokens_requested == words
        assert sim_prompt_tokens(prompt) == words + 3 * (2 * n - 1) + 3
        assert sim_prompt_tokens(prompt, chat=False) == words


def test_replies_of_any_length_are_counted_exactly() -> None:
    replies = [0, 1, 7, 250, 33]
    turns = converse(SyntheticPrompts(Uniform(1, 80), 300, seed=4), replies, user=7)
    for prompt in turns:
        assert prompt.prompt_tokens_requested is not None
        assert sim_prompt_tokens(prompt) - prompt.prompt_tokens_requested == 3 * len(prompt.messages) + 3
    assistant = [m["content"] for m in turns[-1].messages if m["role"] == "assistant"]
    assert [len(text.split()) for text in assistant] == replies[:-1]


def test_a_conversation_keeps_its_first_group_and_system_prompt() -> None:
    source = SharedPrefixes(SyntheticPrompts(10, 16), PrefixSpec(4, 20, 0.5), seed=1)
    for user in range(20):
        turns = converse(source, [5] * 6, user=user)
        groups = {dict(p.labels)["group"] for p in turns}
        assert len(groups) == 1
        assert len({p.messages[0]["content"] for p in turns}) == 1
        assert [p.messages[0]["role"] for p in turns] == ["system"] * 6
        for p in turns:
            assert p.prompt_tokens_requested is not None
            assert sim_prompt_tokens(p) == p.prompt_tokens_requested + 3 * len(p.messages) + 3


def test_each_turn_takes_its_own_output_length_and_fresh_user_message() -> None:
    turns = converse(SyntheticPrompts(10, Uniform(1, 1000), seed=3), [4] * 8)
    assert len({p.max_tokens for p in turns}) > 4
    assert len({p.messages[-1]["content"] for p in turns}) == 8


def test_dataset_turns_have_no_requested_length() -> None:
    entry = Prompt(({"role": "user", "content": "tell me more"},), "tell me more", None, 12, "d.jsonl")
    turns = converse(DatasetPrompts("d.jsonl", (entry,)), [3, 3, 3])
    assert [p.prompt_tokens_requested for p in turns] == [None, None, None]
    assert sim_prompt_tokens(turns[2]) == 3 * 3 + 3 * 2 + 3 * 5 + 3


def test_conversations_are_deterministic() -> None:
    source = SyntheticPrompts(Uniform(1, 50), Uniform(1, 50), seed=8)
    assert converse(source, [3, 9, 27]) == converse(source, [3, 9, 27])


def test_think_time_spreads_half_each_way_around_its_mean() -> None:
    spec = ConversationSpec(turns=3, think_time_s=2.0)
    pauses = [spec.think_s(1, user, request) for user in range(50) for request in range(200)]
    assert 1.0 <= min(pauses) < 1.01 and 2.99 < max(pauses) < 3.0
    assert statistics.fmean(pauses) == pytest.approx(2.0, rel=0.01)
    assert pauses == [spec.think_s(1, u, r) for u in range(50) for r in range(200)]
    assert ConversationSpec(think_time_s=0.0).think_s(1, 2, 3) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"turns": 0}, "--turns"),
        ({"turns": MAX_TURNS + 1}, "--turns"),
        ({"think_time_s": -1.0}, "--think-time-s"),
        ({"think_time_s": float("nan")}, "--think-time-s"),
        ({"think_time_s": float("inf")}, "--think-time-s"),
    ],
)
def test_bad_conversation_options_name_themselves(kwargs: dict[str, float], option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ConversationSpec(**kwargs)  # type: ignore[arg-type]
    assert caught.value.option == option
