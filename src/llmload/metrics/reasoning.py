"""A reasoning model's two phases, per stage: thinking (``reasoning_content``) and the answer.

Filled only by requests that reasoned, so a stage of a model that does not think carries
nothing (``to_dict`` is empty and the summary says ``reasoning: null``). Mergeable like the
rest of a stage's state: counters and log-bucket histograms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llmload.core.record import RequestRecord
from llmload.metrics import derive
from llmload.metrics.histogram import LogHistogram, fill

HISTOGRAMS = ("reasoning_tokens", "answer_tokens", "think", "tpot_reasoning", "tpot_answer")


@dataclass(slots=True)
class ReasoningSide:
    requests: int = 0  # ok requests of the window that reasoned
    tokens: int = 0  # their reasoning tokens
    hist: dict[str, LogHistogram] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Every histogram present, on a new accumulator and on one read back from a message or
        # file that carried fewer (metrics/wire.py): the merge reads each by name.
        fill(self.hist, HISTOGRAMS)

    def add(self, r: RequestRecord) -> None:
        """An ok request of the measured window (tokens per request; ns for the rest)."""
        if r.reasoning_tokens <= 0:
            return
        self.requests += 1
        self.tokens += r.reasoning_tokens
        h = self.hist
        h["reasoning_tokens"].add(r.reasoning_tokens)
        h["answer_tokens"].add(r.answer_tokens)
        for name, value in (
            ("think", derive.think_ns(r)),
            ("tpot_reasoning", derive.tpot_reasoning_ns(r)),
            ("tpot_answer", derive.tpot_answer_ns(r)),
        ):
            if value is not None:
                h[name].add(round(value))

    def merge(self, other: ReasoningSide) -> None:
        self.requests += other.requests
        self.tokens += other.tokens
        for name in HISTOGRAMS:
            self.hist[name].merge(other.hist[name])
