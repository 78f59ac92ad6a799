"""The prefix cache: KV blocks of prompt prefixes, reused by later prompts that start the same way.

It follows vLLM's automatic prefix caching (its design doc "Automatic Prefix Caching" and
``vllm/v1/core/kv_cache_utils.py``), which SGLang's radix cache matches at block granularity:

- a prompt is cut into blocks of ``block_tokens`` tokens (vLLM's default block size, 16); only
  full blocks are cached, the partial tail of a prompt never is;
- a block is known by a chained hash of its parent block's hash and its own tokens, so it
  matches only when everything before it matches too; a lookup walks the blocks from the first
  and stops at the first miss;
- a LoRA adapter's blocks are keyed by the adapter too (vLLM's block hash carries its name as an
  extra key), so the same words under two adapters share nothing;
- at least the last prompt token is always computed, as in vLLM: its logits give the first output
  token, so a prompt found whole still prefills its last block;
- blocks live in an LRU of ``capacity_tokens // block_tokens`` blocks. A prompt's blocks are
  touched from its last to its first, so the head of a prompt is more recent than its tail and
  eviction takes tails first, as vLLM's free queue does; a parent therefore never leaves before
  its children.

Counters are in tokens, as vLLM V1 counts ``vllm:prefix_cache_queries`` and ``..._hits``: a
lookup of a new request adds its prompt length to the queries and what it found to the hits; a
preempted request's second lookup is left out of both (vLLM counts those apart and does not
export them), so a victim finding its own blocks again does not raise the hit rate.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

BLOCK_TOKENS = 16
# SGLang logs decode statistics every 40 decode batches by default (``--decode-log-interval``),
# and each of those logs sets its cache-hit-rate gauge back to 0.
SGLANG_DECODE_LOG_INTERVAL = 40
_ROOT = 0x5EED  # the parent hash of a prompt's first block


def block_hashes(
    tokens: Sequence[Hashable], block_tokens: int, limit: int, adapter: str | None = None
) -> Iterator[int]:
    """The chained hashes of the full blocks within the first ``limit`` tokens, lazily; an
    ``adapter`` changes the root, so every block of its prompts differs from the base model's.

    Python's ``hash`` of a tuple is what vLLM used before it offered sha256: collisions are
    1 in 2**64 per pair, and a simulator has no tenant to defend against.
    """
    parent = _ROOT if adapter is None else hash((_ROOT, adapter))
    for end in range(block_tokens, min(limit, len(tokens)) + 1, block_tokens):
        parent = hash((parent, *tokens[end - block_tokens : end]))
        yield parent


@dataclass(slots=True)
class PrefixCacheStats:
    """What a server exports about its prefix cache."""

    queries: int = 0  # prompt tokens looked up (vLLM V1: prefix_cache_queries)
    hits: int = 0  # of those, tokens found cached (vLLM V1: prefix_cache_hits)
    # SGLang's sglang:cache_hit_rate: cached / prompt tokens of the latest prefill batch, reset
    # to 0 by each decode log (``scheduler_metrics_mixin.py``: log_prefill_stats, log_decode_stats).
    batch_hit_rate: float = 0.0
    decode_batches: int = 0

    def prefill_batch(self, cached_tokens: int, prompt_tokens: int) -> None:
        self.batch_hit_rate = cached_tokens / prompt_tokens if prompt_tokens > 0 else 0.0

    def decode_batch(self) -> None:
        self.decode_batches += 1
        if self.decode_batches % SGLANG_DECODE_LOG_INTERVAL == 0:
            self.batch_hit_rate = 0.0


class PrefixCache:
    """An LRU of prompt blocks with a capacity in tokens (see the module docstring)."""

    __slots__ = ("_blocks", "block_tokens", "capacity_blocks", "stats")

    def __init__(self, capacity_tokens: int, block_tokens: int = BLOCK_TOKENS) -> None:
        if capacity_tokens < 0 or block_tokens < 1:
            raise ValueError("capacity must be >= 0 tokens and a block >= 1 token")
        self.block_tokens = block_tokens
        self.capacity_blocks = capacity_tokens // block_tokens
        self.stats = PrefixCacheStats()
        self._blocks: OrderedDict[int, None] = OrderedDict()  # block hash -> nothing; LRU first

    @property
    def cached_tokens(self) -> int:
        """Tokens the cache holds now."""
        return len(self._blocks) * self.block_tokens

    def lookup(self, tokens: Sequence[Hashable], *, record: bool = True, adapter: str | None = None) -> int:
        """Prompt tokens at the start of ``tokens`` that need no prefill: whole blocks only.

        ``record`` False: a re-lookup (a preempted sequence coming back), kept out of the counters.
        """
        blocks = self._blocks
        found: list[int] = []
        for key in block_hashes(tokens, self.block_tokens, len(tokens) - 1, adapter):
            if key not in blocks:
                break
            found.append(key)
        for key in reversed(found):
            blocks.move_to_end(key)
        cached = len(found) * self.block_tokens
        if record:
            self.stats.queries += len(tokens)
            self.stats.hits += cached
        return cached

    def clear(self) -> int:
        """Forget every cached block (vLLM's ``/reset_prefix_cache``, SGLang's ``/flush_cache``);
        returns the tokens dropped."""
        dropped = self.cached_tokens
        self._blocks.clear()
        return dropped

    def insert(self, tokens: Sequence[Hashable], adapter: str | None = None) -> None:
        """Cache every full block of a prompt whose prefill has run, evicting the least recent."""
        blocks = self._blocks
        for key in reversed(list(block_hashes(tokens, self.block_tokens, len(tokens), adapter))):
            blocks[key] = None
            blocks.move_to_end(key)
        while len(blocks) > self.capacity_blocks:
            blocks.popitem(last=False)
