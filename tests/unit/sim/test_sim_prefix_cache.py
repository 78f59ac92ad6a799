"""The prefix cache: whole chained blocks, the last token always computed, LRU by capacity."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.sim.prefix_cache import (
    BLOCK_TOKENS,
    SGLANG_DECODE_LOG_INTERVAL,
    PrefixCache,
    PrefixCacheStats,
    block_hashes,
)

B = BLOCK_TOKENS


def words(n: int, tag: str = "w") -> list[str]:
    return [f"{tag}{i}" for i in range(n)]


def test_block_size_is_vllms_default() -> None:
    assert B == 16


def test_the_same_prompt_hits_its_full_blocks_but_not_its_last_token() -> None:
    cache = PrefixCache(10_000)
    prompt = words(100)
    assert cache.lookup(prompt) == 0
    cache.insert(prompt)
    assert cache.cached_tokens == 96  # 6 full blocks; the 4-token tail is never cached
    assert cache.lookup(prompt) == 96
    exact = words(64)  # 4 full blocks, found whole: the last one is prefilled again for its logits
    cache.insert(exact)
    assert cache.lookup(exact) == 48
    assert cache.lookup([*exact, "more"]) == 64


def test_a_block_matches_only_when_its_whole_prefix_does() -> None:
    cache = PrefixCache(10_000)
    cache.insert(words(64))
    other_head = ["x", *words(64)[1:]]  # blocks 1..3 equal, block 0 differs
    assert cache.lookup(other_head) == 0
    assert cache.lookup([*words(40), "x", *words(30, "y")]) == 32  # diverges inside block 2


def test_counters_are_tokens_and_a_relookup_is_not_counted() -> None:
    cache = PrefixCache(10_000)
    cache.insert(words(50))
    assert cache.lookup(words(50)) == 48
    assert cache.lookup(words(20, "z")) == 0
    assert (cache.stats.queries, cache.stats.hits) == (70, 48)
    assert cache.lookup(words(50), record=False) == 48
    assert (cache.stats.queries, cache.stats.hits) == (70, 48)


def test_lru_evicts_tails_first_and_lookups_refresh() -> None:
    cache = PrefixCache(2 * B)
    cache.insert(words(3 * B))  # one block over capacity: the tail goes, the head stays
    assert cache.cached_tokens == 2 * B
    assert cache.lookup(words(3 * B + 1)) == 2 * B
    a, b, c = words(B + 1, "a"), words(B + 1, "b"), words(B + 1, "c")
    cache.insert(a)  # evicts the older prompt's second block
    cache.insert(b)  # and now its first
    assert cache.lookup(words(3 * B + 1)) == 0
    assert cache.lookup(a) == B  # a becomes the most recent
    cache.insert(c)  # so b is the one evicted
    assert (cache.lookup(a), cache.lookup(b), cache.lookup(c)) == (B, 0, B)


def test_zero_capacity_caches_nothing() -> None:
    cache = PrefixCache(B - 1)
    cache.insert(words(100))
    assert cache.lookup(words(100)) == 0 and cache.cached_tokens == 0


def test_block_hashes_are_lazy_and_stop_at_the_limit() -> None:
    tokens = words(5 * B)
    assert len(list(block_hashes(tokens, B, 5 * B))) == 5
    assert len(list(block_hashes(tokens, B, 5 * B - 1))) == 4
    assert list(block_hashes(tokens, B, 2 * B)) == list(block_hashes(words(2 * B + 3), B, 10**6))[:2]


def test_sglang_gauge_is_the_latest_prefill_batch_until_a_decode_log() -> None:
    stats = PrefixCacheStats()
    stats.prefill_batch(96, 128)
    assert stats.batch_hit_rate == 0.75
    for _ in range(SGLANG_DECODE_LOG_INTERVAL - 1):
        stats.decode_batch()
    assert stats.batch_hit_rate == 0.75
    stats.decode_batch()
    assert stats.batch_hit_rate == 0.0
    stats.prefill_batch(0, 0)
    assert stats.batch_hit_rate == 0.0


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


# A two-word alphabet and short blocks, so that shared prefixes are common.
prompts = st.lists(st.sampled_from(["a", "b"]), min_size=0, max_size=40)


@settings(max_examples=300, deadline=None)
@given(st.lists(prompts, max_size=6), prompts, st.integers(1, 8))
def test_lookup_is_the_longest_shared_run_of_whole_blocks(
    inserted: list[list[str]], query: list[str], block: int
) -> None:
    cache = PrefixCache(10**6, block_tokens=block)
    for prompt in inserted:
        cache.insert(prompt)
    shared = max((_common_prefix(p, query) for p in inserted), default=0)
    expected = min(shared, max(len(query) - 1, 0)) // block * block
    cached = cache.lookup(query)
    assert cached == expected
    assert cached % block == 0 and cached <= max(len(query) - 1, 0)
    if query:
        cache.insert(query)
        assert cache.lookup(query) == (len(query) - 1) // block * block


@settings(max_examples=200, deadline=None)
@given(st.lists(prompts, min_size=1, max_size=12), st.integers(0, 60))
def test_the_cache_never_holds_more_than_its_capacity(inserted: list[list[str]], capacity: int) -> None:
    cache = PrefixCache(capacity, block_tokens=4)
    for prompt in inserted:
        cache.insert(prompt)
        assert cache.cached_tokens <= capacity
        # The newest prompt keeps its head: as many of its blocks as fit.
        assert cache.lookup([*prompt, "end"], record=False) == min(len(prompt) // 4, capacity // 4) * 4
