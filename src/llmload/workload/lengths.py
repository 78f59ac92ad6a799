"""Token lengths of prompts and outputs: distributions, their specs, and per-request sampling.

A length is sampled from a *unit* (a float in [0, 1)) that the caller derives from a hash of
(seed, user, request) rather than from a shared random generator. That keeps every request's
length deterministic and independent of how many requests other users (or other worker
processes) have sent, which a distributed run needs to be reproducible. Each distribution maps
the unit by inverse transform, so one uniform draw is one length.

Specs (``--prompt-tokens``, ``--max-tokens``)::

    128                     fixed
    uniform:64:256          every whole number from 64 to 256, equally likely
    normal:128:32[:MAX]     mean 128, standard deviation 32, rounded
    lognormal:128:0.5[:MAX] median 128, sigma 0.5 of the natural log, rounded

Normal and lognormal draws are clamped to [1, MAX], MAX defaulting to ``--max-length``: both
are unbounded, and one 10-sigma prompt would otherwise be a request no server accepts. Fixed and
uniform lengths are bounded by what was written.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Literal, Protocol

from llmload.errors import ConfigError

_NOT_A_LENGTH = "must be a positive whole number of tokens, e.g. 128"
_SPEC_HINT = "use 128, uniform:64:256, normal:128:32[:max] or lognormal:128:0.5[:max]"
# inv_cdf is undefined at 0; a unit this small maps to about -8.3 sigma, far below any clamp.
_TINY = 2.0**-54
_STANDARD = NormalDist()


class LengthDistribution(Protocol):
    """A length in tokens, drawn by inverse transform from one uniform ``unit`` in [0, 1)."""

    @property
    def upper(self) -> int:
        """The largest length ``sample`` can return."""
        ...

    def sample(self, unit: float) -> int: ...


@dataclass(frozen=True, slots=True)
class Fixed:
    value: int
    kind: Literal["fixed"] = field(default="fixed", init=False)  # names it in summary.json

    @property
    def upper(self) -> int:
        return self.value

    def sample(self, unit: float) -> int:
        return self.value


@dataclass(frozen=True, slots=True)
class Jittered:
    """``base`` tokens, spread uniformly over ±``fraction`` of it, rounded, at least 1.

    ``fraction`` 0 is a fixed length. Values are assumed validated (``require_fraction``).
    """

    base: int
    fraction: float = 0.0

    @property
    def upper(self) -> int:
        return max(1, round(self.base * (1.0 + self.fraction)))

    def sample(self, unit: float) -> int:
        if self.fraction == 0.0:
            return self.base
        # unit 0 maps to base*(1-f), unit -> 1 to base*(1+f): symmetric, so the mean is base
        # up to rounding and the clamp at 1 (which only matters for tiny bases).
        value = self.base * (1.0 + self.fraction * (2.0 * unit - 1.0))
        return max(1, round(value))


@dataclass(frozen=True, slots=True)
class Uniform:
    """Every whole number in [low, high], equally likely."""

    low: int
    high: int
    kind: Literal["uniform"] = field(default="uniform", init=False)

    @property
    def upper(self) -> int:
        return self.high

    def sample(self, unit: float) -> int:
        # floor over high-low+1 equal slices of [0, 1): exact equal weights, high included.
        return self.low + int(unit * (self.high - self.low + 1))


@dataclass(frozen=True, slots=True)
class Normal:
    """round(mean + sd·z), clamped to [1, cap]."""

    mean: float
    sd: float
    cap: int
    kind: Literal["normal"] = field(default="normal", init=False)

    @property
    def upper(self) -> int:
        return self.cap

    def sample(self, unit: float) -> int:
        z = _STANDARD.inv_cdf(min(max(unit, _TINY), 1.0 - _TINY))
        return min(self.cap, max(1, round(self.mean + self.sd * z)))


@dataclass(frozen=True, slots=True)
class LogNormal:
    """round(median·exp(sigma·z)), clamped to [1, cap]; its mean is median·exp(sigma²/2)."""

    median: float
    sigma: float
    cap: int
    kind: Literal["lognormal"] = field(default="lognormal", init=False)

    @property
    def upper(self) -> int:
        return self.cap

    def sample(self, unit: float) -> int:
        z = _STANDARD.inv_cdf(min(max(unit, _TINY), 1.0 - _TINY))
        return min(self.cap, max(1, round(self.median * math.exp(self.sigma * z))))


Length = Fixed | Uniform | Normal | LogNormal


def parse_length_spec(option: str, spec: str | int, *, cap: int) -> Length:
    """A length distribution from an option's text (see the module docstring for the forms).

    ``cap`` bounds normal and lognormal draws whose spec names no MAX of its own. Raises
    ``ConfigError`` naming ``option`` for anything else, so a typo stops the run before it
    starts instead of becoming a silently different workload.
    """
    require_length("--max-length", cap)
    if isinstance(spec, int) and not isinstance(spec, bool):
        require_length(option, spec)
        return Fixed(spec)
    text = str(spec).strip()
    kind, _, rest = text.partition(":")
    if not rest:
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            raise ConfigError(option, spec, f"not a positive length or a distribution: {_SPEC_HINT}")
        return Fixed(int(text))
    parts = rest.split(":")
    kind = kind.lower()
    if kind == "uniform" and len(parts) == 2:
        low, high = (_whole(option, spec, part) for part in parts)
        if low > high:
            raise ConfigError(option, spec, "uniform:LOW:HIGH needs LOW <= HIGH")
        return Uniform(low, high)
    if kind in ("normal", "lognormal") and len(parts) in (2, 3):
        return _bell(option, spec, kind, parts, cap)
    raise ConfigError(option, spec, _SPEC_HINT)


def _bell(option: str, spec: str | int, kind: str, parts: list[str], cap: int) -> Length:
    center, spread = (_number(option, spec, part) for part in parts[:2])
    top = _whole(option, spec, parts[2]) if len(parts) == 3 else cap
    name = "mean" if kind == "normal" else "median"
    if center < 1:
        raise ConfigError(option, spec, f"the {name} must be at least 1 token")
    if spread < 0:
        raise ConfigError(option, spec, "the spread (sd or sigma) must be 0 or more")
    if top < center:
        problem = f"the cap {top} is below the {name}: raise MAX or --max-length"
        raise ConfigError(option, spec, problem)
    return Normal(center, spread, top) if kind == "normal" else LogNormal(center, spread, top)


def _whole(option: str, spec: str | int, part: str) -> int:
    part = part.strip()
    if not (part.isascii() and part.isdigit()) or int(part) < 1:
        raise ConfigError(option, spec, f"{part!r} is not a positive whole number: {_SPEC_HINT}")
    return int(part)


def _number(option: str, spec: str | int, part: str) -> float:
    try:
        value = float(part)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ConfigError(option, spec, f"{part.strip()!r} is not a number: {_SPEC_HINT}")
    return value


def parse_length(option: str, text: str) -> int:
    """A positive whole number of tokens from an option's text, e.g. ``"128"``."""
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


def require_output_jitter(jitter: float, output_is_distribution: bool) -> None:
    """``--output-jitter`` is a fixed ``--max-tokens``' spread; a distribution has its own."""
    require_fraction("--output-jitter", jitter)
    if output_is_distribution and jitter:
        problem = "applies to a fixed --max-tokens only: give the spread in the distribution"
        raise ConfigError("--output-jitter", jitter, problem)
