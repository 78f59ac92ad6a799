"""Trace prompts: exact lengths, hash ids shared as blocks of text, sessions as growing prefixes."""

from __future__ import annotations

from llmload.workload.trace_prompts import BLOCK_TOKENS, TracePrompts
from llmload.workload.traces import Trace, TraceEntry

B = BLOCK_TOKENS


def shared_words(a: str, b: str) -> int:
    wa, wb = a.split(), b.split()
    return next((i for i, (x, y) in enumerate(zip(wa, wb, strict=False)) if x != y), min(len(wa), len(wb)))


def prompts(*entries: TraceEntry, seed: int = 0, salt: str = "s") -> tuple[TracePrompts, list[str]]:
    source = TracePrompts(Trace("t", "mooncake", entries), seed, salt)
    return source, [source.get(e, i).text for i, e in enumerate(entries)]


def test_requests_share_exactly_the_blocks_their_hash_ids_share() -> None:
    a = TraceEntry(0.0, 3 * B, 4, (1, 2, 3))
    b = TraceEntry(0.1, 3 * B, 4, (1, 2, 9))
    c = TraceEntry(0.2, 3 * B, 4, (5, 2, 3))
    _, (ta, tb, tc) = prompts(a, b, c)
    assert shared_words(ta, tb) == 2 * B  # the third block differs from its first word on
    assert ta.split()[: 2 * B] == tb.split()[: 2 * B]
    assert shared_words(ta, tc) == 0  # a prefix cache matches from the start: nothing shared
    assert ta.split()[B:] == tc.split()[B:]  # the same ids render the same text wherever they are


def test_the_length_is_the_entrys_with_a_partial_last_block_and_an_own_remainder() -> None:
    partial = TraceEntry(0.0, B + 100, 4, (1, 2))
    longer = TraceEntry(0.0, 2 * B + 50, 4, (1, 2))
    extra = TraceEntry(0.0, 2 * B + 50, 4, (1, 2))
    more_ids = TraceEntry(0.0, 10, 4, (1, 2, 3))
    source, (tp, tl, te, tm) = prompts(partial, longer, extra, more_ids)
    assert [len(t.split()) for t in (tp, tl, te, tm)] == [B + 100, 2 * B + 50, 2 * B + 50, 10]
    assert tl.startswith(tp)  # a partial block is the start of the whole one
    assert shared_words(tl, te) == 2 * B  # both blocks shared, the remainders each their own
    assert source.get(longer, 1).prompt_tokens_requested == 2 * B + 50
    assert source.get(longer, 1).max_tokens == 4


def test_entries_without_ids_are_unique_and_sessions_grow_their_own_text() -> None:
    one, two = TraceEntry(0.0, 300, 4), TraceEntry(0.1, 300, 4)
    turn1 = TraceEntry(0.2, 200, 4, session="s1")
    turn2 = TraceEntry(0.3, 400, 4, session="s1")
    other = TraceEntry(0.4, 400, 4, session="s2")
    _, (t1, t2, s1, s2, o) = prompts(one, two, turn1, turn2, other)
    assert shared_words(t1, t2) == 0
    assert s2.startswith(s1) and len(s2.split()) == 400
    assert shared_words(s2, o) == 0


def test_the_same_seed_and_salt_render_the_same_text_and_another_salt_none_of_it() -> None:
    entry = TraceEntry(0.0, 2 * B + 10, 4, (7, 8))
    _, (first,) = prompts(entry)
    _, (again,) = prompts(entry)
    _, (salted,) = prompts(entry, salt="other")
    _, (seeded,) = prompts(entry, seed=1)
    assert first == again
    assert shared_words(first, salted) == 0 and shared_words(first, seeded) == 0


def test_a_looped_pass_resends_the_blocks_but_not_the_own_text() -> None:
    entry = TraceEntry(0.0, B + 20, 4, (1,))
    source, _ = prompts(entry)
    first, second = source.get(entry, 0, 0).text, source.get(entry, 0, 1).text
    assert shared_words(first, second) == B


def test_messages_are_sent_as_they_are() -> None:
    messages = ({"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"})
    entry = TraceEntry(0.0, None, 7, messages=messages)
    prompt = TracePrompts(Trace("t", "jsonl", (entry,))).get(entry, 0)
    assert prompt.messages == messages and prompt.max_tokens == 7
    assert prompt.text == "be brief\n\nhi" and prompt.prompt_tokens_requested is None
