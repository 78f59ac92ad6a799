"""The one-pass per-read derivations equal their definitions, computed the slow obvious way."""

from __future__ import annotations

from array import array
from collections import Counter
from itertools import groupby, pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.metrics import derive
from llmload.metrics.timeseries import TimeSeries

NS = 1_000_000_000

# Reads as (gap to the previous read, events in it, tokens of each event): gaps of 0 are
# impossible between two reads, tokens of 0 happen (an event whose usage did not grow).
_read = st.tuples(st.integers(1, 3 * NS), st.integers(1, 4), st.integers(0, 3))


def record(reads: list[tuple[int, int, int]], start_ns: int) -> RequestRecord:
    r = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=start_ns, sent_ns=start_ns)
    t = start_ns
    stamps, tokens = array("q"), array("l")
    for gap, events, per_event in reads:
        t += gap
        stamps.extend([t] * events)
        tokens.extend([per_event] * events)
    r.event_ns, r.event_tokens = stamps, tokens
    return r


def naive_reads(r: RequestRecord) -> list[tuple[int, int, int]]:
    pairs = zip(r.event_ns, r.event_tokens, strict=True)
    return [
        (t, len(g), sum(tok for _, tok in g))
        for t, g in ((t, list(g)) for t, g in groupby(pairs, key=lambda p: p[0]))
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(_read, max_size=40), st.integers(0, 10 * NS))
def test_token_reads_are_the_runs_of_equal_stamps(reads: list[tuple[int, int, int]], start: int) -> None:
    r = record(reads, start)
    runs = derive.token_reads(r)
    want = naive_reads(r)
    assert list(zip(runs.stamps, runs.events, runs.tokens, strict=True)) == want
    assert runs.gaps() == [b[0] - a[0] for a, b in pairwise(want)]
    values, weights = runs.itl()
    assert list(zip(values, weights, strict=True)) == [
        ((b[0] - a[0]) // b[2], b[2]) for a, b in pairwise(want) if b[2] > 0
    ]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_read, max_size=40),
    st.integers(0, 10 * NS),
    st.integers(0, 40 * NS),
    st.one_of(st.none(), st.integers(0, 40 * NS)),
)
def test_tokens_in_a_window_and_per_second(
    reads: list[tuple[int, int, int]], start: int, t0: int, t1: int | None
) -> None:
    r = record(reads, start)
    pairs = list(zip(r.event_ns, r.event_tokens, strict=True))
    assert derive.tokens_in(r, t0, t1) == sum(tok for t, tok in pairs if t >= t0 and (t1 is None or t < t1))
    offset = 1_700_000_000 * NS + 123_456_789  # wall minus perf: seconds do not start at stamp 0
    series = TimeSeries()
    series.add(r, offset, derive.ttft_ns(r))
    want: Counter[int] = Counter()
    for t, tok in pairs:
        want[(t + offset) // NS] += tok
    assert +series.tokens == +want
