"""The clock-offset estimate: the truth within its uncertainty, whatever the legs, and the
shortest round trip chosen."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from llmload.core.clock import ClockProbe, estimate

MS = 1_000_000


def probe(sent_ns: int, out_ns: int, back_ns: int, offset_ns: int) -> ClockProbe:
    """A round trip whose legs took ``out_ns`` and ``back_ns``, to a worker ``offset_ns`` ahead."""
    return ClockProbe(sent_ns, sent_ns + out_ns + offset_ns, sent_ns + out_ns + back_ns)


legs = st.integers(min_value=0, max_value=500 * MS)


@given(
    offset_ns=st.integers(min_value=-3600 * 10**9, max_value=3600 * 10**9),
    trips=st.lists(st.tuples(legs, legs), min_size=1, max_size=8),
)
def test_the_truth_is_within_the_uncertainty_whatever_the_legs(
    offset_ns: int, trips: list[tuple[int, int]]
) -> None:
    sent = 1_800_000_000 * 10**9
    found = estimate(probe(sent + i * 50 * MS, a, b, offset_ns) for i, (a, b) in enumerate(trips))
    assert found is not None
    assert abs(found.offset_s - offset_ns / 1e9) <= found.uncertainty_s + 1e-9
    assert found.uncertainty_s == min(a + b for a, b in trips) / 2 / 1e9
    assert found.probes == len(trips)


def test_equal_legs_give_the_offset_exactly_and_the_shortest_trip_wins() -> None:
    offset = 2_500 * MS
    found = estimate(
        [
            probe(0, 40 * MS, 1 * MS, offset),  # a queue on the way out: off by 19.5 ms
            probe(100 * MS, 300_000, 300_000, offset),
            probe(200 * MS, 1 * MS, 30 * MS, offset),
        ]
    )
    assert found is not None
    assert found.offset_s == 2.5
    assert found.uncertainty_s == 0.0003
    assert found.to_master(1_000.0) == 997.5


def test_no_probe_or_only_replies_out_of_order_give_no_estimate() -> None:
    assert estimate([]) is None
    assert estimate([ClockProbe(sent_ns=10, worker_ns=5, received_ns=9)]) is None
