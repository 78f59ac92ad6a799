"""A mergeable log-bucket histogram with bounded relative error (DDSketch-style).

Bucket ``i`` holds the values in ``[GAMMA**i, GAMMA**(i+1))`` and is represented by the point of
least relative error in it, ``GAMMA**i * 2*GAMMA/(GAMMA+1)``: every value is within
``(GAMMA-1)/(GAMMA+1)`` = 0.990% of its representative, so every quantile is within 1% of the
exact nearest-rank sample. Values below 1 (only 0 for ints) share one zero bucket, represented
by 0. Count, sum, min and max are exact.

State is a sparse dict of bucket counts, so merging workers' histograms is adding counts:
associative, commutative and exact to one bucket width. Size is bounded by the value range, not
the sample count: ints up to 10**13 need at most ~1,520 buckets.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from fractions import Fraction
from functools import cache
from itertools import accumulate
from math import log
from operator import mul
from typing import Final

from llmload.protocol.jsonvalue import JSON, JSONObject, array, integer, obj

GAMMA: Final = 1.02
VERSION: Final = 1
_INV_LOG_GAMMA: Final = 1.0 / math.log(GAMMA)
_MID: Final = 2.0 * GAMMA / (GAMMA + 1.0)


def nearest_rank(q: float, count: int) -> int:
    """The 1-based rank of quantile ``q`` among ``count`` samples: ``ceil(q * count)``, ≥ 1.

    ``q`` is taken as the decimal its repr shows, so that ``0.07 * 100`` is rank 7 and not 8
    (the binary float 0.07 is a hair above 7/100).
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q!r} is outside [0, 1]")
    return max(1, math.ceil(Fraction(repr(q)) * count))


def fill(hist: dict[str, LogHistogram], names: Iterable[str]) -> None:
    """Give ``hist`` an empty histogram under each of ``names`` it lacks."""
    for name in names:
        if name not in hist:
            hist[name] = LogHistogram()


class LogHistogram:
    """Histogram of non-negative ints (nanoseconds, tokens): exact count, sum, min, max."""

    __slots__ = ("_buckets", "_max", "_min", "_zero", "count", "total")

    __hash__ = None  # type: ignore[assignment]  # mutable: never a dict key

    def __init__(self) -> None:
        self._buckets: dict[int, int] = {}
        self._zero = 0
        self.count = 0
        self.total = 0
        self._min = 0
        self._max = 0

    def add(self, value: int) -> None:
        """Record one sample (hot path: a log and a dict increment)."""
        if value >= 1:
            i = int(math.log(value) * _INV_LOG_GAMMA)  # int() floors: the log is ≥ 0 here
            buckets = self._buckets
            buckets[i] = buckets.get(i, 0) + 1
        elif value >= 0:
            self._zero += 1
        else:
            raise ValueError(f"negative sample {value!r}: a clock or counting bug upstream")
        if self.count:
            if value < self._min:
                self._min = value
            elif value > self._max:
                self._max = value
        else:
            self._min = self._max = value
        self.count += 1
        self.total += value

    def add_many(self, value: int, n: int) -> None:
        """Record ``n`` samples of the same value."""
        if n < 0:
            raise ValueError(f"negative repeat count {n!r}")
        if n == 0:
            return
        self.add(value)
        if n > 1:
            i = self._index(value)
            if i is None:
                self._zero += n - 1
            else:
                self._buckets[i] += n - 1
            self.count += n - 1
            self.total += value * (n - 1)

    def add_all(self, values: Sequence[int], weights: Sequence[int] | None = None) -> None:
        """Record every value (``weights[i]`` times each, when given): ``add`` in bulk, for the
        per-read samples a finished request folds at once.

        The values are sorted and taken a bucket at a time (one log and one bisect per bucket,
        not per value): the gaps of one request fall into a few 2% buckets, so folding a
        100-token request costs a few microseconds instead of a hundred ``add`` calls.
        """
        if not values:
            return
        if weights is not None and weights.count(1) == len(weights):
            weights = None
        if weights is None:
            ordered = sorted(values)
            upto = None  # the count below position p is p itself
            n, total = len(ordered), sum(ordered)
        else:
            if min(weights) < 1:
                raise ValueError("weights must be >= 1: drop a value rather than weigh it 0")
            pairs = sorted(zip(values, weights, strict=True))
            ordered = [v for v, _ in pairs]
            upto = list(accumulate((w for _, w in pairs), initial=0))
            n, total = upto[-1], sum(map(mul, values, weights))
        low, high = ordered[0], ordered[-1]
        if low < 0:
            raise ValueError(f"negative sample {low!r}: a clock or counting bug upstream")
        buckets, size = self._buckets, len(ordered)
        pos = bisect_left(ordered, 1)  # ints below 1 are 0: the zero bucket
        self._zero += pos if upto is None else upto[pos]
        while pos < size:
            i = int(log(ordered[pos]) * _INV_LOG_GAMMA)
            end = bisect_left(ordered, _first_int(i + 1), pos)
            buckets[i] = buckets.get(i, 0) + (end - pos if upto is None else upto[end] - upto[pos])
            pos = end
        if self.count:
            self._min, self._max = min(self._min, low), max(self._max, high)
        else:
            self._min, self._max = low, high
        self.count += n
        self.total += total

    def merge(self, other: LogHistogram) -> None:
        """Add ``other``'s samples to this histogram."""
        if not other.count:
            return
        buckets = self._buckets
        for i, n in other._buckets.items():
            buckets[i] = buckets.get(i, 0) + n
        self._zero += other._zero
        if self.count:
            self._min = min(self._min, other._min)
            self._max = max(self._max, other._max)
        else:
            self._min, self._max = other._min, other._max
        self.count += other.count
        self.total += other.total

    @property
    def is_empty(self) -> bool:
        return self.count == 0

    @property
    def min(self) -> int | None:
        return self._min if self.count else None

    @property
    def max(self) -> int | None:
        return self._max if self.count else None

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    @property
    def bucket_count(self) -> int:
        """Non-empty buckets, the zero bucket included: the size of the state."""
        return len(self._buckets) + (1 if self._zero else 0)

    def quantile(self, q: float) -> float | None:
        """Nearest-rank quantile (the lower sample at a tie), within 1%; None when empty."""
        return self.quantiles((q,))[0]

    def quantiles(self, qs: Sequence[float]) -> list[float | None]:
        """``quantile`` of each of ``qs``, in one walk over the buckets: a summary asks five
        per metric, and sorting the buckets once for all of them is most of its cost."""
        ranks = [nearest_rank(q, self.count) for q in qs]  # validates every q even when empty
        return self.at_ranks(ranks)

    def at_ranks(self, ranks: Sequence[int]) -> list[float | None]:
        """The ``rank``-th smallest sample (1-based) for each of ``ranks``, within 1%; the
        smallest and the largest exactly."""
        if not self.count:
            return [None] * len(ranks)
        out: list[float | None] = [None] * len(ranks)
        pending = []
        for k, rank in enumerate(ranks):
            if rank <= 1 or rank <= self._zero:
                # the smallest sample, or the zero bucket: samples in [0, 1) are all 0 for ints
                out[k] = float(self._min)
            elif rank >= self.count:
                out[k] = float(self._max)
            else:
                pending.append((rank, k))
        if not pending:
            return out
        pending.sort()
        seen, j, n = self._zero, 0, len(pending)
        want = pending[0][0]
        buckets = self._buckets
        for i in sorted(buckets):
            seen += buckets[i]
            if seen < want:
                continue
            while j < n and seen >= pending[j][0]:
                out[pending[j][1]] = self._representative(i)
                j += 1
            if j == n:
                return out
            want = pending[j][0]
        raise AssertionError("bucket counts do not add up to count")  # pragma: no cover

    def iter_buckets(self) -> Iterator[tuple[float, float, int]]:
        """``(lower, upper, count)`` of each non-empty bucket in ascending order, the zero
        bucket as ``(0, 1, n)``: values ``v`` with ``lower <= v < upper`` (for exporters)."""
        if self._zero:
            yield 0.0, 1.0, self._zero
        for i in sorted(self._buckets):
            yield GAMMA**i, GAMMA ** (i + 1), self._buckets[i]

    def to_dict(self) -> dict[str, JSON]:
        """JSON-safe, sparse and deterministic: equal histograms give equal dicts."""
        return {
            "version": VERSION,
            "gamma": GAMMA,
            "count": self.count,
            "total": self.total,
            "min": self.min,
            "max": self.max,
            "zero": self._zero,
            "buckets": [[i, self._buckets[i]] for i in sorted(self._buckets)],
        }

    @classmethod
    def from_dict(cls, d: JSONObject) -> LogHistogram:
        """Read back ``to_dict`` output (from a worker or a results file); checks consistency."""
        if d.get("version") != VERSION or d.get("gamma") != GAMMA:
            raise ValueError(
                f"histogram version {d.get('version')!r} gamma {d.get('gamma')!r}: "
                f"expected version {VERSION} gamma {GAMMA}"
            )
        h = cls()
        h._zero = integer(d["zero"], "zero")
        for pair in array(d["buckets"], "buckets"):
            i, n = array(pair, "bucket")
            if n:
                h._buckets[integer(i, "bucket index")] = integer(n, "bucket count")
        h.count = integer(d["count"], "count")
        h.total = integer(d["total"], "total")
        if h.count:
            h._min, h._max = integer(d["min"], "min"), integer(d["max"], "max")
        if h._zero + sum(h._buckets.values()) != h.count or min(h._buckets.values(), default=1) < 0:
            raise ValueError("histogram bucket counts do not add up to its count")
        return h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LogHistogram):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"LogHistogram(count={self.count}, min={self.min}, max={self.max})"

    def _representative(self, i: int) -> float:
        """Bucket ``i``'s point of least relative error, clamped to the integers the bucket
        can hold and to [min, max]: the samples are ints, so small values (tokens per event,
        events per read) come out exact instead of 1% off."""
        lo, hi = _first_int(i), _first_int(i + 1) - 1
        value = GAMMA**i * _MID
        if lo <= hi:
            value = min(max(value, lo), hi)
        return float(min(max(value, self._min), self._max))

    @staticmethod
    def _index(value: int) -> int | None:
        return _index(value) if value >= 1 else None


def _index(value: int) -> int:
    """The bucket of a value ≥ 1; ``add`` inlines this for speed."""
    return int(math.log(value) * _INV_LOG_GAMMA)


@cache  # pure, and bounded: ~1,600 buckets span 1 ns to 3 hours
def _first_int(i: int) -> int:
    """The smallest int ≥ 1 whose bucket is ``i`` or above, by the very computation ``add``
    uses (``GAMMA**i`` alone may round to the other side of a boundary)."""
    v = max(1, math.ceil(GAMMA**i))
    while v > 1 and _index(v - 1) >= i:
        v -= 1
    while _index(v) < i:
        v += 1
    return v


class SignedHistogram:
    """Signed ints (differences: what the client saw minus what the server did), as two
    ``LogHistogram``s of magnitudes, one for the negative samples and one for the rest; the
    same 1% bound on each quantile, merged and shipped the same way."""

    __slots__ = ("negative", "positive")

    def __init__(self) -> None:
        self.negative = LogHistogram()  # of -v, for every v < 0
        self.positive = LogHistogram()

    def add(self, value: int) -> None:
        if value < 0:
            self.negative.add(-value)
        else:
            self.positive.add(value)

    @property
    def count(self) -> int:
        return self.negative.count + self.positive.count

    @property
    def mean(self) -> float | None:
        return (self.positive.total - self.negative.total) / self.count if self.count else None

    @property
    def min(self) -> int | None:
        if self.negative.count:
            return -(self.negative.max or 0)
        return self.positive.min

    @property
    def max(self) -> int | None:
        if self.positive.count:
            return self.positive.max
        return None if self.negative.min is None else -self.negative.min

    def quantiles(self, qs: Sequence[float]) -> list[float | None]:
        neg = self.negative.count
        out: list[float | None] = []
        for q in qs:
            rank = nearest_rank(q, self.count)
            if not self.count:
                out.append(None)
            elif rank <= neg:  # the rank-th smallest is the (neg - rank + 1)-th largest magnitude
                (magnitude,) = self.negative.at_ranks((neg - rank + 1,))
                out.append(None if magnitude is None else -magnitude)
            else:
                out.extend(self.positive.at_ranks((rank - neg,)))
        return out

    def merge(self, other: SignedHistogram) -> None:
        self.negative.merge(other.negative)
        self.positive.merge(other.positive)

    def to_dict(self) -> dict[str, JSON]:
        return {"negative": self.negative.to_dict(), "positive": self.positive.to_dict()}

    @classmethod
    def from_dict(cls, d: JSONObject) -> SignedHistogram:
        h = cls()
        h.negative = LogHistogram.from_dict(obj(d["negative"], "negative"))
        h.positive = LogHistogram.from_dict(obj(d["positive"], "positive"))
        return h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SignedHistogram):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]
