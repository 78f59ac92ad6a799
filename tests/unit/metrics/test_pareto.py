from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from llmload.metrics.pareto import frontier


def test_a_sweep_curve_is_its_own_frontier_and_a_dominated_point_is_not() -> None:
    # per-user tok/s against aggregate tok/s: C=1, 8, 32, 128 of one engine, and a worse one
    points = [(82.5, 82.5), (75.0, 600.0), (37.9, 1100.0), (18.5, 1536.0), (30.0, 900.0)]
    assert frontier(points) == [3, 2, 1, 0]
    assert 4 not in frontier(points)  # (37.9, 1100) beats it on both


def test_minimising_y_keeps_the_low_latency_points() -> None:
    # aggregate tok/s against TTFT p99: higher x and lower y are better
    points = [(100.0, 20.0), (500.0, 40.0), (400.0, 60.0), (1500.0, 400.0)]
    assert frontier(points, maximize_y=False) == [0, 1, 3]


def test_duplicates_and_ties() -> None:
    assert frontier([(1.0, 1.0), (1.0, 1.0)]) == [0]
    assert frontier([(2.0, 1.0), (1.0, 1.0)]) == [0]  # same y, smaller x: dominated
    assert frontier([]) == []


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), max_size=30))
def test_no_kept_point_is_dominated_and_every_dropped_one_is(raw: list[tuple[int, int]]) -> None:
    points = [(float(x), float(y)) for x, y in raw]
    kept = set(frontier(points))

    def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and a != b

    for i, p in enumerate(points):
        beaten = any(dominates(q, p) for q in points)
        first_copy = points.index(p) == i
        assert (i in kept) == (not beaten and first_copy)
