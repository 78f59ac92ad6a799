"""Shared system prompts: share ratio, group per user, equal lengths, labels, bad options."""

from __future__ import annotations

from collections import Counter

import pytest

from llmload.errors import ConfigError
from llmload.sim.tokens import chat_prompt_tokens, count_words
from llmload.workload.datasets import DatasetPrompts
from llmload.workload.lengths import Uniform
from llmload.workload.prefixes import MAX_GROUPS, PrefixSpec, SharedPrefixes
from llmload.workload.prompts import Prompt, SyntheticPrompts

PAIRS = [(user, request) for user in range(100) for request in range(200)]


def prefixed(groups: int = 4, tokens: int = 50, share: float = 0.75, seed: int = 0) -> SharedPrefixes:
    return SharedPrefixes(SyntheticPrompts(20, 8, seed=seed), PrefixSpec(groups, tokens, share), seed)


def group_of(prompt: Prompt) -> str:
    return dict(prompt.labels)["group"]


@pytest.mark.parametrize("share", [0.0, 0.2, 0.75, 1.0])
def test_the_share_of_requests_with_a_group_prefix_is_as_asked(share: float) -> None:
    source = prefixed(share=share)
    shared = sum(group_of(source.get(*pair)) != "none" for pair in PAIRS)
    assert shared / len(PAIRS) == pytest.approx(share, abs=0.01)


def test_a_users_group_is_its_index_modulo_the_groups() -> None:
    source = prefixed(groups=3, share=0.5)
    for user, request in PAIRS[:3000]:
        group = group_of(source.get(user, request))
        assert group in ("none", str(user % 3))


def test_a_group_shares_one_system_prompt_and_groups_differ_from_the_first_word() -> None:
    source = prefixed(groups=4, share=1.0)
    systems: dict[str, set[str]] = {}
    for pair in PAIRS[:2000]:
        prompt = source.get(*pair)
        systems.setdefault(group_of(prompt), set()).add(prompt.messages[0]["content"])
    assert sorted(systems) == ["0", "1", "2", "3"]
    assert all(len(texts) == 1 for texts in systems.values())
    first_words = {next(iter(texts)).split()[0] for texts in systems.values()}
    assert len(first_words) == 4


def test_unshared_system_prompts_are_unique_and_as_long() -> None:
    source = prefixed(tokens=30, share=0.0)
    texts = [source.get(*pair).messages[0]["content"] for pair in PAIRS[:5000]]
    assert len(set(texts)) == len(texts)
    assert {len(text.split()) for text in texts} == {30}


def test_the_user_message_stays_unique_behind_the_prefix() -> None:
    inner = SyntheticPrompts(20, 8, seed=5)
    source = SharedPrefixes(inner, PrefixSpec(2, 10, 1.0), seed=5)
    for pair in PAIRS[:500]:
        prompt, plain = source.get(*pair), inner.get(*pair)
        assert prompt.messages[1:] == plain.messages
        assert prompt.max_tokens == plain.max_tokens
        assert prompt.text == f"{prompt.messages[0]['content']}\n\n{plain.text}"


def test_requested_and_simulator_tokens_count_the_prefix() -> None:
    source = SharedPrefixes(SyntheticPrompts(Uniform(5, 60), 8), PrefixSpec(3, 40, 0.5), 0)
    for pair in PAIRS[:2000]:
        prompt = source.get(*pair)
        words = sum(count_words(m["content"]) for m in prompt.messages)
        assert prompt.prompt_tokens_requested == words
        assert chat_prompt_tokens(words, len(prompt.messages)) == words + 9  # two messages


def test_same_seed_same_prompts_other_seed_other_prefixes() -> None:
    assert [prefixed(seed=1).get(*p) for p in PAIRS[:300]] == [prefixed(seed=1).get(*p) for p in PAIRS[:300]]
    a, b = prefixed(share=1.0, seed=1).get(0, 0), prefixed(share=1.0, seed=2).get(0, 0)
    assert a.messages[0] != b.messages[0]


def test_a_datasets_own_system_message_is_extended_not_doubled() -> None:
    own = Prompt(
        ({"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}),
        "be brief\n\nhi",
        None,
        16,
        "d.jsonl",
    )
    prompt = SharedPrefixes(DatasetPrompts("d.jsonl", (own,)), PrefixSpec(1, 5, 1.0)).get(0, 0)
    assert [m["role"] for m in prompt.messages] == ["system", "user"]
    assert prompt.messages[0]["content"].endswith("\n\nbe brief")
    assert prompt.prompt_tokens_requested is None and prompt.labels == (("group", "0"),)


@pytest.mark.parametrize(
    ("kwargs", "option"),
    [
        ({"groups": -1}, "--prefix-groups"),
        ({"groups": MAX_GROUPS + 1}, "--prefix-groups"),
        ({"groups": 2, "tokens": 0}, "--prefix-tokens"),
        ({"groups": 2, "share": 1.5}, "--prefix-share"),
        ({"groups": 2, "share": -0.1}, "--prefix-share"),
        ({"groups": 2, "share": float("nan")}, "--prefix-share"),
    ],
)
def test_bad_prefix_options_name_themselves(kwargs: dict[str, float], option: str) -> None:
    with pytest.raises(ConfigError) as caught:
        PrefixSpec(**kwargs)  # type: ignore[arg-type]
    assert caught.value.option == option


def test_groups_are_evenly_used_by_consecutive_users() -> None:
    source = prefixed(groups=4, share=1.0)
    counts = Counter(group_of(source.get(user, 0)) for user in range(400))
    assert counts == {"0": 100, "1": 100, "2": 100, "3": 100}
