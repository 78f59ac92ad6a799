"""Token lengths of prompts and outputs: parsing, validation, and per-request sampling.

A length is sampled from a *unit* (a float in [0, 1)) that the caller derives from a hash of
(seed, user, request) rather than from a shared random generator. That keeps every request's
length deterministic and independent of how many requests other users (or other worker
processes) have sent, which a distributed run needs to be reproducible.

This is the home of length distributions: a later distribution (uniform range, normal,
lognormal, taken from a dataset) is one more frozen dataclass with ``sample(unit) -> int``
satisfying ``LengthDistribution``, chosen by parsing a spec in ``parse_length``'s place.
Today there is one: ``Jittered`` (a fixed length, optionally spread uniformly by ±fraction).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from llmload.errors import ConfigError

_NOT_A_LENGTH = "must be a positive whole number of tokens, e.g. 128"


class LengthDistribution(Protocol):
    """A length in tokens, drawn by inverse transform from one uniform ``unit`` in [0, 1)."""

    def sample(self, unit: float) -> int: ...


@dataclass(frozen=True, slots=True)
class Jittered:
    """``base`` tokens, spread uniformly over ±``fraction`` of it, rounded, at least 1.

    ``fraction`` 0 is a fixed length. Values are assumed validated (``require_fraction``).
    """

    base: int
    fraction: float = 0.0

    def sample(self, unit: float) -> int:
        if self.fraction == 0.0:
            return self.base
        # unit 0 maps to base*(1-f), unit -> 1 to base*(1+f): symmetric, so the mean is base
        # up to rounding and the clamp at 1 (which only matters for tiny bases).
        value = self.base * (1.0 + self.fraction * (2.0 * unit - 1.0))
        return max(1, round(value))


def parse_length(option: str, text: str) -> int:
    """A positive whole number of tokens from an option's text, e.g. ``"128"``.

    Raises ``ConfigError`` naming ``option`` for anything else, so a typo stops the run before
    it starts instead of becoming a silently different workload.
    """
    stripped = text.strip()
    # int() alone would also accept "+5", "1_0" and non-ASCII digits; ASCII digits only keeps
    # the accepted syntax the same as what the error message promises.
    if not (stripped.isascii() and stripped.isdigit()) or int(stripped) < 1:
        raise ConfigError(option, text, _NOT_A_LENGTH)  # the text as typed, "0" included
    return int(stripped)


def require_length(option: str, value: int) -> None:
    """Check an already-typed length: a positive int (``bool`` is refused: it is a slip)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(option, value, _NOT_A_LENGTH)


def require_optional_length(option: str, value: int | None) -> None:
    """Like ``require_length``, with ``None`` meaning "let the server decide"."""
    if value is not None:
        require_length(option, value)


def require_fraction(option: str, value: float) -> None:
    """A spread in [0, 1): 0.1 means ±10%; 1 or more could ask for zero or negative lengths."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value < 1.0:
        raise ConfigError(
            option, value, "must be a fraction from 0 up to (not including) 1, e.g. 0.1 for ±10%"
        )
