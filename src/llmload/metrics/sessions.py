"""Sessions per stage: agentic sessions as wholes, and the prefix cache per turn.

Two views, both mergeable like the rest of a stage's state:

- per session (the agent scenario's ``SessionAccount``): sessions that *started* inside the
  measured window, by how they ended, and for completed ones their duration, turns, requests,
  tokens, worst turn TTFT and cache hit rate as log-bucket histograms;
- per replayed session (``--agent-trace``), summed over the completed ones: turns replayed
  live, spliced to fit the recording, sent as recorded, and cut at ``max_tokens``;
- per turn index (every request labelled ``turn=N``, the conversation scenario's too): the
  prompt tokens the server counted and the part it said came from its cache, so the summary
  can show reuse growing with the history.

A stage without either carries nothing (``to_dict`` is empty; the summary says ``null``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from llmload.core.record import RequestRecord
from llmload.metrics.histogram import LogHistogram, fill
from llmload.workload.agents import SessionAccount

REPLAY = ("sessions", "live", "spliced", "recorded", "cut", "sessions_spliced")
HISTOGRAMS = ("duration", "turns", "requests", "output_tokens", "worst_ttft", "cache_hit_permille")
_MAX_TURN_KEYS = 256  # labels are bounded upstream (MAX_TURNS); this guards the wire too


@dataclass(slots=True)
class SessionSide:
    ended: Counter[str] = field(default_factory=Counter)  # completed, failed, unfinished
    hist: dict[str, LogHistogram] = field(default_factory=dict)  # of completed sessions
    # turn index -> [prompt tokens, cached tokens] of the window's requests that reported both
    by_turn: dict[str, list[int]] = field(default_factory=dict)
    replay: Counter[str] = field(default_factory=Counter)  # REPLAY's counts over completed sessions

    def __post_init__(self) -> None:
        # Every histogram present, on a new accumulator and on one read back from a message or
        # file that carried fewer (metrics/wire.py): the merge reads each by name.
        fill(self.hist, HISTOGRAMS)

    def add_session(self, s: SessionAccount) -> None:
        """A session that started inside the window has ended."""
        self.ended[s.outcome or "unfinished"] += 1
        if s.outcome != "completed":
            return
        h = self.hist
        for name, value in (
            ("duration", s.duration_ns),
            ("turns", s.turns),
            ("requests", s.requests),
            ("output_tokens", s.output_tokens),
            ("worst_ttft", s.worst_ttft_ns),
        ):
            if value is not None:
                h[name].add(value)
        rate = s.cache_hit_rate
        if rate is not None:
            h["cache_hit_permille"].add(round(rate * 1000))
        r = s.replay
        if r is not None:
            self.replay.update(
                sessions=1, live=r.live, spliced=r.spliced, recorded=r.recorded, cut=r.cut,
                sessions_spliced=int(r.spliced > 0),
            )  # fmt: skip

    def add_turn(self, r: RequestRecord) -> None:
        """A request of the window: its turn's prompt and cached tokens, where it has both."""
        if r.cached_tokens is None or r.prompt_tokens is None:
            return
        for name, value in r.labels:
            if name == "turn":
                pair = self.by_turn.get(value)
                if pair is None:
                    if len(self.by_turn) >= _MAX_TURN_KEYS:
                        return
                    pair = self.by_turn[value] = [0, 0]
                pair[0] += r.prompt_tokens
                pair[1] += r.cached_tokens
                return

    def merge(self, other: SessionSide) -> None:
        self.ended.update(other.ended)
        self.replay.update(other.replay)
        for name in HISTOGRAMS:
            self.hist[name].merge(other.hist[name])
        for turn, (prompt, cached) in other.by_turn.items():
            pair = self.by_turn.setdefault(turn, [0, 0])
            pair[0] += prompt
            pair[1] += cached

    def __bool__(self) -> bool:
        return bool(self.ended or self.by_turn)
