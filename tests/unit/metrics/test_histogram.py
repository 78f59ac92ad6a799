"""LogHistogram: quantiles within 1% of exact nearest-rank, exact merges, bounded size."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.metrics.histogram import LogHistogram, SignedHistogram, nearest_rank

QS = [0.0, 0.001, 0.01, 0.07, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]

_value = st.one_of(
    st.sampled_from([0, 1, 2, 10**12, 10**13]),
    st.integers(min_value=0, max_value=10**13),
    st.integers(min_value=0, max_value=60).map(lambda e: int(1.7**e)),  # log-spread
)
_samples = st.lists(_value, min_size=1, max_size=300)


def hist(values: list[int]) -> LogHistogram:
    h = LogHistogram()
    for v in values:
        h.add(v)
    return h


def exact(values: list[int], q: float) -> int:
    """Nearest rank over the sorted samples: the lower one at a tie."""
    return sorted(values)[nearest_rank(q, len(values)) - 1]


def assert_close(got: float | None, want: int) -> None:
    assert got is not None
    if want == 0:
        assert got == 0
    else:
        assert abs(got - want) <= 0.01 * want, (got, want)


@settings(max_examples=300)
@given(_samples, st.floats(min_value=0.0, max_value=1.0))
def test_quantiles_within_one_percent_of_nearest_rank(values: list[int], q: float) -> None:
    h = hist(values)
    for quantile in [*QS, q]:
        assert_close(h.quantile(quantile), exact(values, quantile))
    assert h.count == len(values)
    assert h.total == sum(values)
    assert (h.min, h.max) == (min(values), max(values))
    assert h.mean == pytest.approx(sum(values) / len(values))


@settings(max_examples=200)
@given(_samples, st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=8))
def test_many_quantiles_in_one_walk_equal_each_asked_alone(values: list[int], qs: list[float]) -> None:
    h = hist(values)
    asked = [*qs, *reversed(QS)]  # any order, repeats included
    assert h.quantiles(asked) == [h.quantile(q) for q in asked]
    assert LogHistogram().quantiles(asked) == [None] * len(asked)


def test_nearest_rank_takes_the_lower_sample_at_a_tie() -> None:
    h = hist([10, 20])
    assert_close(h.quantile(0.5), 10)
    assert nearest_rank(0.5, 2) == 1
    assert nearest_rank(0.07, 100) == 7  # not 8, though 0.07 * 100 > 7 in binary floats
    assert nearest_rank(0.0, 5) == 1
    assert nearest_rank(1.0, 5) == 5


def test_extremes_are_exact() -> None:
    h = hist([0, 1, 3, 10**12])
    assert h.quantile(0.0) == 0
    assert h.quantile(0.25) == 0
    assert h.quantile(0.5) == 1
    assert h.quantile(1.0) == 10**12


def test_small_ints_are_exact() -> None:
    h = hist([1, 1, 2, 3, 7, 40])  # e.g. tokens per event under speculative decoding
    assert [h.quantile(q) for q in (0.3, 0.5, 0.6, 0.8, 0.9)] == [1, 2, 3, 7, 40]


def test_every_bucket_representative_is_within_one_percent() -> None:
    # Each value shares a bucket with others only through the representative: pin min and max
    # far away so that the clamp to [min, max] cannot hide an error.
    rng = random.Random(2)
    values = [*range(1, 20_000), *(rng.randrange(1, 10**13) for _ in range(20_000))]
    for v in values:
        h = hist([0, v, v, 10**13])
        assert_close(h.quantile(0.5), v)


def test_empty() -> None:
    h = LogHistogram()
    assert h.is_empty
    assert (h.quantile(0.5), h.mean, h.min, h.max) == (None, None, None, None)
    assert h.to_dict()["buckets"] == []
    assert LogHistogram.from_dict(h.to_dict()) == h


def test_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="negative"):
        LogHistogram().add(-1)
    with pytest.raises(ValueError, match="negative"):
        LogHistogram().add_many(3, -1)
    with pytest.raises(ValueError, match="outside"):
        LogHistogram().quantile(1.5)


@given(_value, st.integers(min_value=0, max_value=10**6))
def test_add_many_equals_repeated_add(value: int, n: int) -> None:
    h = LogHistogram()
    h.add_many(value, n)
    reference = LogHistogram()
    for _ in range(min(n, 50)):
        reference.add(value)
    if n > 50:
        reference.add_many(value, n - 50)
    assert h == reference
    assert h.count == n
    assert h.total == value * n


@given(_samples, _samples, _samples)
def test_merge_is_associative_and_commutative(a: list[int], b: list[int], c: list[int]) -> None:
    left = hist(a)
    left.merge(hist(b))
    left.merge(hist(c))
    bc = hist(b)
    bc.merge(hist(c))
    right = hist(a)
    right.merge(bc)
    swapped = hist(c)
    swapped.merge(hist(a))
    swapped.merge(hist(b))
    assert left.to_dict() == right.to_dict() == swapped.to_dict() == hist(a + b + c).to_dict()


def test_merge_with_empty() -> None:
    h = hist([5, 7])
    h.merge(LogHistogram())
    assert h == hist([5, 7])
    empty = LogHistogram()
    empty.merge(h)
    assert empty == h


@given(_samples)
def test_dict_round_trip_through_json(values: list[int]) -> None:
    h = hist(values)
    d = json.loads(json.dumps(h.to_dict()))
    back = LogHistogram.from_dict(d)
    assert back == h
    assert back.to_dict() == h.to_dict()
    for q in QS:
        assert back.quantile(q) == h.quantile(q)


def test_from_dict_rejects_foreign_or_inconsistent_state() -> None:
    d = hist([1, 2, 3]).to_dict()
    with pytest.raises(ValueError, match="gamma"):
        LogHistogram.from_dict({**d, "gamma": 1.01})
    with pytest.raises(ValueError, match="add up"):
        LogHistogram.from_dict({**d, "count": 4})


def test_size_is_bounded_after_a_million_samples() -> None:
    rng = random.Random(1)
    h = LogHistogram()
    for _ in range(10**6):
        h.add(int(math.exp(rng.uniform(0.0, math.log(1e13)))))
    h.add(0)
    h.add_many(10**13, 1000)
    assert h.count == 10**6 + 1001
    assert h.bucket_count < 1600
    assert len(json.dumps(h.to_dict())) < 40_000


def test_iter_buckets_covers_every_sample() -> None:
    values = [0, 0, 1, 5, 5, 1000, 10**9]
    h = hist(values)
    buckets = list(h.iter_buckets())
    assert sum(n for _, _, n in buckets) == len(values)
    assert buckets[0] == (0.0, 1.0, 2)
    for v in values[2:]:
        assert any(lo <= v < hi for lo, hi, _ in buckets)
    assert [lo for lo, _, _ in buckets] == sorted(lo for lo, _, _ in buckets)


@settings(max_examples=300, deadline=None)
@given(_samples, st.lists(_value, max_size=50))
def test_bulk_add_equals_one_at_a_time(values: list[int], before: list[int]) -> None:
    bulk = hist(before)  # bulk adds land on a histogram that may already hold samples
    bulk.add_all(values)
    assert bulk == hist(before + values)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_value, st.integers(1, 5)), min_size=1, max_size=100))
def test_weighted_bulk_add_equals_add_many(pairs: list[tuple[int, int]]) -> None:
    bulk, one_by_one = LogHistogram(), LogHistogram()
    bulk.add_all([v for v, _ in pairs], [w for _, w in pairs])
    for v, w in pairs:
        one_by_one.add_many(v, w)
    assert bulk == one_by_one


def test_bulk_add_refuses_what_add_refuses() -> None:
    with pytest.raises(ValueError, match="negative"):
        LogHistogram().add_all([3, -1])
    with pytest.raises(ValueError, match="weights"):
        LogHistogram().add_all([3, 4], [1, 0])
    h = LogHistogram()
    h.add_all([])
    assert h.is_empty


@given(st.lists(st.integers(-(10**9), 10**9), min_size=1, max_size=300))
def test_signed_quantiles_are_within_one_percent_of_nearest_rank(values: list[int]) -> None:
    h = SignedHistogram()
    for v in values:
        h.add(v)
    ordered = sorted(values)
    assert (h.count, h.min, h.max) == (len(values), ordered[0], ordered[-1])
    assert h.mean == pytest.approx(sum(values) / len(values))
    for q, got in zip(QS, h.quantiles(QS), strict=True):
        exact = ordered[nearest_rank(q, len(values)) - 1]
        assert got is not None and abs(got - exact) <= 0.0101 * abs(exact) + 1, (q, got, exact)


def test_signed_histograms_merge_and_travel() -> None:
    a, b, one = SignedHistogram(), SignedHistogram(), SignedHistogram()
    for v in range(-50, 50):
        (a if v % 2 else b).add(v * 1000)
        one.add(v * 1000)
    a.merge(b)
    assert a == one == SignedHistogram.from_dict(one.to_dict())
    assert SignedHistogram().quantiles([0.5]) == [None]
