"""Cancellation: a share of requests closed by the client part way, as a user who moves on does.

``--cancel F`` picks each request with probability F (drawn per (user, request) from the seed,
so the same requests are picked on one process or many) and ``--cancel-after MS`` or
``LO-HI`` gives its delay, fixed or uniform over the range, from the moment the request is
handed to its connection. A delay shorter than the server's TTFT cancels during the prefill
(or the queue), a longer one during the decode: the record says which. The client then closes
the connection, which is all an HTTP/1.1 client can do to say it no longer wants the answer; a
server that watches its sockets (vLLM, SGLang, llama.cpp, the simulator) frees the slot.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.errors import ConfigError
from llmload.workload.words import draw, seed_key, substream, unit

_CANCEL_STREAM = 6  # the seed's stream for cancellations: independent of every other draw


@dataclass(frozen=True, slots=True)
class CancelSpec:
    """``--cancel`` and ``--cancel-after``; a share of 0 cancels nothing."""

    share: float = 0.0
    after_ms: tuple[float, float] = (500.0, 500.0)  # uniform over [lo, hi]; lo == hi: fixed

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:  # NaN fails too
            raise ConfigError(
                "--cancel", self.share, "must be a share from 0 to 1, e.g. 0.1 for 10% of requests"
            )
        lo, hi = self.after_ms
        if not 0.0 < lo <= hi < float("inf"):
            raise ConfigError(
                "--cancel-after", f"{lo}-{hi}", "must be milliseconds above 0, or LO-HI with LO <= HI"
            )

    def delay_s(self, seed: int, user_index: int, request_index: int) -> float | None:
        """How long after it starts this request is cancelled; None: it is not."""
        if self.share == 0.0:
            return None
        value = draw(seed_key(seed, _CANCEL_STREAM), user_index, request_index)
        if unit(value) >= self.share:
            return None
        lo, hi = self.after_ms
        return (lo + (hi - lo) * unit(substream(value, 1))) / 1000


def parse_after(text: str) -> tuple[float, float]:
    """``--cancel-after``: ``MS`` or ``LO-HI``."""
    lo, sep, hi = text.strip().partition("-")
    try:
        low = float(lo)
        high = float(hi) if sep else low
    except ValueError:
        raise ConfigError(
            "--cancel-after", text, "use milliseconds, e.g. 300, or a range, e.g. 100-2000"
        ) from None
    return low, high
