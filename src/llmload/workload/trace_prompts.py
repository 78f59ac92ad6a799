"""A trace entry's prompt: synthetic text that shares exactly what the trace says was shared.

- An entry with ``hash_ids`` (Mooncake) is one block of ``BLOCK_TOKENS`` words per id, the last
  cut to the entry's length where it is partial, then, when the entry is longer than its blocks,
  a remainder of its own. The same id always renders the same block (seeded by the id, ``--seed``
  and the run's salt), so requests whose ids agree up to a point share exactly that prefix of
  text, and a server's prefix cache finds what it found in production: ``[1, 2, 3]`` and
  ``[1, 2, 9]`` share their first two blocks and differ from the third one's first word on.
- An entry with a ``session`` (llmload's JSONL) is the start of its session's text: a later,
  longer turn extends an earlier one as a conversation's prompt extends its history.
- Any other entry is text no other request has, as the synthetic prompts are (a salt word first).
- An entry's ``messages`` are sent as they are.

Block and session texts start with a salt word of their own, so no two blocks (or a block and a
request's own text) share even a first word; the run salt changes them all, so a run never hits
the prefix cache that the run before it filled, unless ``--salt`` gives the same salt back.
Words are tokens for the simulator and about 1 to 1.4 tokens each for real tokenizers.
"""

from __future__ import annotations

import hashlib

from llmload.workload.prompts import OFFSETS, Prompt
from llmload.workload.traces import Trace, TraceEntry
from llmload.workload.words import MASK64, WordSequence, draw, salt, salted, seed_key

BLOCK_TOKENS = 512  # Mooncake's block: each hash id stands for 512 tokens of the prompt
_BLOCK_STREAM = 5  # the seed's streams: independent of prompts (0, 1), prefixes (2, 3), turns (4)
_OWN_STREAM = 6
_SESSION_STREAM = 7


def _split(value: int) -> tuple[int, int]:
    """An id as the two indices ``salt`` packs: distinct salts for every id below 2**32."""
    value &= MASK64
    return value >> 16, value & 0xFFFF


class TracePrompts:
    """The prompts of one trace's entries; build one per process (it builds the word text)."""

    __slots__ = ("_block_key", "_blocks", "_own_key", "_salts", "_session_key", "_source", "_words")

    def __init__(
        self, trace: Trace, seed: int = 0, run_salt: str = "", block_tokens: int = BLOCK_TOKENS
    ) -> None:
        self._source = trace.name
        self._blocks = block_tokens
        self._block_key = seed_key(seed, _BLOCK_STREAM)
        self._own_key = seed_key(seed, _OWN_STREAM)
        self._session_key = seed_key(seed, _SESSION_STREAM)
        keys = (self._block_key, self._own_key, self._session_key)
        self._salts = tuple(salted(key, run_salt) for key in keys)
        longest = max((_beyond_blocks(e, block_tokens) for e in trace.entries), default=0)
        self._words = WordSequence(seed_key(seed, _OWN_STREAM + 1), max(longest, block_tokens) + OFFSETS)

    def get(self, entry: TraceEntry, index: int, repeat: int = 0) -> Prompt:
        """Entry number ``index`` of the trace in its ``repeat``-th pass (``--trace-loop``)."""
        if entry.messages is not None:
            return Prompt(
                messages=entry.messages,
                text="\n\n".join(m["content"] for m in entry.messages),
                prompt_tokens_requested=None,
                max_tokens=entry.max_tokens,
                source=self._source,
            )
        assert entry.prompt_tokens is not None
        text = self.text(entry, index, repeat)
        return Prompt(
            messages=({"role": "user", "content": text},),
            text=text,
            prompt_tokens_requested=entry.prompt_tokens,
            max_tokens=entry.max_tokens,
            source=self._source,
        )

    def text(self, entry: TraceEntry, index: int, repeat: int = 0) -> str:
        words = entry.prompt_tokens or 1
        if entry.session is not None and not entry.hash_ids:
            return self._session(entry.session, words)
        parts = []
        for block, hash_id in enumerate(entry.hash_ids):
            left = words - block * self._blocks
            if left <= 0:
                break  # more ids than the length needs: the trace's own rounding
            parts.append(self.block(hash_id, min(left, self._blocks)))
        rest = words - len(entry.hash_ids) * self._blocks
        if rest > 0:
            own = salt(self._salts[1], repeat, index)
            parts.append(self._text(own, draw(self._own_key, repeat, index), rest))
        return " ".join(parts)

    def block(self, hash_id: int, words: int) -> str:
        """The first ``words`` words of hash id ``hash_id``'s block (a partial block is a prefix)."""
        head = salt(self._salts[0], *_split(hash_id))
        return self._text(head, draw(self._block_key, *_split(hash_id)), words)

    def _session(self, session: str, words: int) -> str:
        number = int.from_bytes(hashlib.blake2b(session.encode(), digest_size=8).digest())
        head = salt(self._salts[2], *_split(number))
        return self._text(head, draw(self._session_key, *_split(number)), words)

    def _text(self, head: str, value: int, words: int) -> str:
        # The word sequence holds the longest text plus every offset: a slice always fits.
        body = self._words.slice(value & (OFFSETS - 1), words - 1)
        return f"{head} {body}" if body else head


def _beyond_blocks(entry: TraceEntry, block_tokens: int) -> int:
    """The words of an entry's text that no block gives (the longest sizes the word sequence)."""
    if entry.prompt_tokens is None:
        return 0
    return max(entry.prompt_tokens - len(entry.hash_ids) * block_tokens, 0)
