"""Open-loop arrival schedules: when requests *should* be sent, whatever the server does.

A closed loop waits for a free user before sending, which hides server queueing (coordinated
omission). Here the schedule is fixed in advance from the rate and the distribution of
inter-arrival times, and every request keeps its scheduled time, so a saturated server shows up
as client queue time and as end-to-end latency measured from ``scheduled``.

Distributed runs split one global, seeded schedule: process ``share`` of ``shares`` takes every
``shares``-th arrival starting at its index, so the fleet together sends exactly the global
process at the requested rate, whatever the number of processes.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from llmload.errors import ConfigError

ArrivalKind = Literal["constant", "poisson", "gamma"]
KINDS: tuple[ArrivalKind, ...] = ("constant", "poisson", "gamma")


@dataclass(frozen=True, slots=True)
class Arrivals:
    """``rate`` requests per second in total; ``burstiness`` is the gamma shape (1: Poisson,
    below 1: burstier, above 1: more regular), as in vLLM's ``--burstiness``."""

    rate: float
    kind: ArrivalKind = "poisson"
    burstiness: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.rate > 0:
            raise ConfigError("--rate", self.rate, "must be greater than 0 requests per second")
        if self.kind not in KINDS:
            raise ConfigError("--arrival", self.kind, f"must be one of {', '.join(KINDS)}")
        if not self.burstiness > 0:
            raise ConfigError("--burstiness", self.burstiness, "must be greater than 0")

    def gaps(self) -> Iterator[float]:
        """The global inter-arrival times in seconds, forever."""
        rng = random.Random(self.seed)
        mean = 1.0 / self.rate
        while True:
            if self.kind == "constant":
                yield mean
            elif self.kind == "poisson":
                yield rng.expovariate(self.rate)
            else:
                # Gamma with shape k and scale mean/k keeps the mean at 1/rate; k sets the spread.
                yield rng.gammavariate(self.burstiness, mean / self.burstiness)

    def offsets(self, share: int = 0, shares: int = 1) -> Iterator[float]:
        """This process's arrival times in seconds from the schedule's start."""
        if not 0 <= share < shares:
            raise ValueError(f"share {share} of {shares}")
        t = 0.0
        for i, gap in enumerate(self.gaps()):
            t += gap
            if i % shares == share:
                yield t
