"""Classic (fixed-bucket) histograms and counters for the live Prometheus exporter.

Prometheus' classic histograms are cumulative counts at fixed upper bounds (``le``). Deriving
those counts from the log buckets of ``aggregate.StageStats`` would be approximate at every
bound, so each sample is also counted here, by a ``bisect`` into fixed bound arrays: the exported
``le`` counts are then exact and can be recomputed from ``requests.jsonl``.

Which bounds (docs/grafana.md explains the choice):

- the metric's plain name carries vLLM's own bound list for its server-side counterpart, so a
  client quantile and a server quantile laid over each other on one Grafana panel are
  interpolated alike by ``histogram_quantile`` and any gap between them is real;
- a ``fine`` sibling carries 1-2-5 per decade from 100 µs to 100 s where vLLM's list is too coarse
  for a client (ITL, TPOT and chunk gap start at 10 ms, so a 6 ms per-token ITL falls in the
  first bucket; E2E starts at 300 ms). TTFT keeps vLLM's list alone: from 1 ms to 100 ms it is
  already finer than 1-2-5.

``ClassicStats`` is one stage's state: bounded (a few hundred ints), mergeable exactly, and
shipped from workers to the master as plain lists of ints. It counts every finished record, of
every phase, so its counters agree with ``requests.jsonl``; latency histograms count only ``ok``
records (a failed request never enters a latency histogram, docs/metrics.md); token counters count
every record. Durations are int ns (TPOT rounded to the ns, as the catalog reads it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import mul

from llmload.core.record import OK, RequestRecord
from llmload.metrics import derive
from llmload.metrics.catalog import Sample, by_key, prometheus_name
from llmload.protocol.jsonvalue import JSON, JSONObject, array, integer, obj

# Bump when any bound list changes: merging counts of two layouts would be silently wrong.
LAYOUT = 1
_NS = 1_000_000_000


def _ns(seconds: tuple[float, ...]) -> tuple[int, ...]:
    return tuple(round(s * _NS) for s in seconds)


def one_two_five(lowest: int, highest: int) -> tuple[int, ...]:
    """1-2-5 per decade from ``lowest`` (a power of ten) up to ``highest`` inclusive."""
    out: list[int] = []
    decade = lowest
    while decade <= highest:
        out += [m * decade for m in (1, 2, 5) if m * decade <= highest]
        decade *= 10
    return tuple(out)


# vLLM's lists (vllm/v1/metrics/loggers.py), copied exactly: overlays depend on identical bounds.
VLLM_TTFT_NS = _ns(
    (
        0.001,
        0.005,
        0.01,
        0.02,
        0.04,
        0.06,
        0.08,
        0.1,
        0.25,
        0.5,
        0.75,
        1.0,
        2.5,
        5.0,
        7.5,
        10.0,
        20.0,
        40.0,
        80.0,
        160.0,
        640.0,
        2560.0,
    )
)
# vllm:inter_token_latency_seconds and vllm:request_time_per_output_token_seconds share it.
VLLM_ITL_NS = _ns(
    (
        0.01,
        0.025,
        0.05,
        0.075,
        0.1,
        0.15,
        0.2,
        0.3,
        0.4,
        0.5,
        0.75,
        1.0,
        2.5,
        5.0,
        7.5,
        10.0,
        20.0,
        40.0,
        80.0,
    )
)
VLLM_E2E_NS = _ns(
    (
        0.3,
        0.5,
        0.8,
        1.0,
        1.5,
        2.0,
        2.5,
        5.0,
        10.0,
        15.0,
        20.0,
        30.0,
        40.0,
        50.0,
        60.0,
        120.0,
        240.0,
        480.0,
        960.0,
        1920.0,
        7680.0,
    )
)
FINE_NS = one_two_five(100_000, 100 * _NS)  # 100 µs .. 100 s
# vLLM builds its token lists as 1-2-5 up to max_model_len: this is the same list, uncut.
TOKENS = one_two_five(1, 1_000_000)
# Tokens per event are small integers (1 without speculative decoding): exact steps up to 8.
TOKENS_PER_EVENT = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 32, 64, 128)


@dataclass(frozen=True, slots=True)
class Buckets:
    """One exported histogram: ``name`` in Prometheus, ``source`` the sample stream it counts."""

    key: str
    name: str
    source: str
    bounds: tuple[int, ...]  # inclusive upper bounds (``le``), ascending; +Inf is implicit
    seconds: bool  # samples are ns, exported in seconds; else plain counts
    metric: str  # the catalog's key: its series name, its help, and its sample per request


def _seconds(metric: str, bounds: tuple[int, ...]) -> Buckets:
    return Buckets(metric, prometheus_name(metric), metric, bounds, True, metric)


def _fine(metric: str) -> Buckets:
    # The fine sibling's name is the catalog's with "fine" before the unit, as Prometheus wants.
    name = prometheus_name(metric).removesuffix("_seconds") + "_fine_seconds"
    return Buckets(f"{metric}_fine", name, metric, FINE_NS, True, metric)


def _counts(metric: str, bounds: tuple[int, ...], source: str = "") -> Buckets:
    return Buckets(source or metric, prometheus_name(metric), source or metric, bounds, False, metric)


# Names are the catalog's series of each metric; the keys here name the sample streams.
SPECS: tuple[Buckets, ...] = (
    # vLLM's TTFT list is already finer than 1-2-5 from 1 ms to 100 ms: no fine sibling needed.
    _seconds("ttft", VLLM_TTFT_NS),
    _seconds("ttfot", VLLM_TTFT_NS),
    _seconds("itl", VLLM_ITL_NS),
    _fine("itl"),
    _seconds("tpot", VLLM_ITL_NS),
    _fine("tpot"),
    # vLLM's E2E list starts at 300 ms: every short request would share one bucket.
    _seconds("e2e", VLLM_E2E_NS),
    _fine("e2e"),
    # vLLM's client calls the chunk gap ITL, and the server's ITL is per engine step: overlayable.
    _seconds("chunk_gap", VLLM_ITL_NS),
    _fine("chunk_gap"),
    # Client queueing has no server counterpart (vLLM's queue time is the server's own wait).
    _seconds("queue", FINE_NS),
    _counts("tokens_per_event", TOKENS_PER_EVENT),
    _counts("prompt_tokens", TOKENS),
    # The stream keeps vLLM's word for output tokens, as its exported family does.
    _counts("output_tokens", TOKENS, source="generation_tokens"),
)
BY_KEY = {spec.key: spec for spec in SPECS}
SOURCES: tuple[str, ...] = tuple(dict.fromkeys(spec.source for spec in SPECS))
# Each stream is counted once, into the union of its exported lists: one bisect per sample
# however many lists it is exported with. Every exported bound is a union bound, so each
# exported ``le`` count is an exact sum of union buckets.
UNION: dict[str, tuple[int, ...]] = {
    source: tuple(sorted({b for spec in SPECS if spec.source == source for b in spec.bounds}))
    for source in SOURCES
}
# The streams with one sample per request, each with the catalog's reading of it; the rest (ITL,
# chunk gap, tokens per event) have one per read or token.
_PER_REQUEST: tuple[tuple[str, Sample, tuple[int, ...]], ...] = tuple(
    (spec.source, sample, UNION[spec.source])
    for spec in SPECS
    if spec.key == spec.source and (sample := by_key(spec.metric).sample) is not None
)


class ClassicStats:
    """One stage's exact classic histograms and counters; see the module docstring."""

    __slots__ = ("by_tenant", "counts", "generation_tokens_total", "outcomes", "prompt_tokens_total", "sums")

    def __init__(self) -> None:
        # Per stream: samples per union bucket, the last one above every bound (+Inf).
        self.counts: dict[str, list[int]] = {src: [0] * (len(b) + 1) for src, b in UNION.items()}
        self.sums: dict[str, int] = dict.fromkeys(SOURCES, 0)
        self.outcomes: Counter[str] = Counter()
        self.prompt_tokens_total = 0
        self.generation_tokens_total = 0
        # --tenants: each tenant's share of the stage, counted again on its own (bounded: at
        # most 32 tenants); the stage's own counts stay the whole
        self.by_tenant: dict[str, ClassicStats] = {}

    def add(
        self, r: RequestRecord, tenant: str | None = None, measures: derive.Measures | None = None
    ) -> None:
        """``measures``: the request's, as the fold derived them once; None: derived here."""
        m = derive.measure(r) if measures is None else measures
        if tenant is not None:
            self.by_tenant.setdefault(tenant, ClassicStats()).add(r, measures=m)
        self.outcomes[r.outcome.value] += 1  # by value: the keys are JSON's
        if r.prompt_tokens is not None:
            self.prompt_tokens_total += r.prompt_tokens
        self.generation_tokens_total += r.output_tokens
        if r.outcome != OK:
            return
        counts, sums = self.counts, self.sums
        for source, sample, bounds in _PER_REQUEST:
            value = sample(r, m)
            if value is not None:
                counts[source][bisect_left(bounds, value)] += 1
                sums[source] += value
        runs = m.reads
        self._observe_all("itl", *runs.itl())
        self._observe_all("chunk_gap", runs.gaps())
        self._observe_all("tokens_per_event", r.event_tokens[1:])

    def _observe_all(
        self,
        source: str,
        values: Sequence[int],
        weights: Sequence[int] | None = None,
    ) -> None:
        """Count a request's per-read samples (``weights[i]`` times each, when given) at once:
        sorted, then one ``bisect`` per bound up to the largest value instead of one per sample
        (a 1,000-token request has 1,000 samples and ~40 bounds)."""
        if not values:
            return
        if weights is None:
            ordered, upto = sorted(values), None
            self.sums[source] += sum(values)
        else:
            pairs = sorted(zip(values, weights, strict=True))
            ordered = [v for v, _ in pairs]
            upto = list(accumulate((w for _, w in pairs), initial=0))
            self.sums[source] += sum(map(mul, values, weights))
        counts, size = self.counts[source], len(ordered)
        below = 0  # samples counted so far: those <= the previous bound
        for j, bound in enumerate(UNION[source]):
            pos = bisect_right(ordered, bound, below)
            counts[j] += pos - below if upto is None else upto[pos] - upto[below]
            below = pos
            if below == size:
                return
        counts[-1] += size - below if upto is None else upto[size] - upto[below]  # +Inf

    def merge(self, other: ClassicStats) -> None:
        for source, counts in other.counts.items():
            mine = self.counts[source]
            for i, n in enumerate(counts):
                mine[i] += n
        for source, total in other.sums.items():
            self.sums[source] += total
        self.outcomes.update(other.outcomes)
        self.prompt_tokens_total += other.prompt_tokens_total
        self.generation_tokens_total += other.generation_tokens_total
        for tenant, part in other.by_tenant.items():
            self.by_tenant.setdefault(tenant, ClassicStats()).merge(part)

    def cumulative(self, key: str) -> list[int]:
        """The ``le`` counts of exported histogram ``key``: one per bound, then +Inf (the total)."""
        spec = BY_KEY[key]
        union, running, at = UNION[spec.source], 0, {}
        for bound, n in zip(union, self.counts[spec.source], strict=False):
            running += n
            at[bound] = running
        return [at[bound] for bound in spec.bounds] + [sum(self.counts[spec.source])]

    def to_dict(self) -> dict[str, JSON]:
        """Compact and msgpack/JSON-safe: empty streams and trailing zero counts left out."""
        hist: dict[str, list[int]] = {}
        for source, counts in self.counts.items():
            end = len(counts)
            while end and not counts[end - 1]:
                end -= 1
            if end:
                hist[source] = counts[:end]
        d: dict[str, JSON] = {
            "layout": LAYOUT,
            "h": hist,
            "s": {k: v for k, v in self.sums.items() if v},
            "o": dict(self.outcomes),
            "pt": self.prompt_tokens_total,
            "gt": self.generation_tokens_total,
        }
        if self.by_tenant:
            d["t"] = {tenant: part.to_dict() for tenant, part in self.by_tenant.items()}
        return d

    @classmethod
    def from_dict(cls, d: JSONObject) -> ClassicStats:
        if d.get("layout") != LAYOUT:
            raise ValueError(
                f"classic bucket layout {d.get('layout')!r} != {LAYOUT}: "
                "workers and master run different llmload versions"
            )
        stats = cls()
        for source, given in obj(d["h"], "h").items():
            mine, counts = stats.counts[source], array(given, source)
            if len(counts) > len(mine):
                raise ValueError(f"{source}: {len(counts)} bucket counts for {len(mine)} buckets")
            mine[: len(counts)] = [integer(n, source) for n in counts]
        for source, total in obj(d["s"], "s").items():
            stats.sums[source] = integer(total, source)
        stats.outcomes.update({k: integer(v, k) for k, v in obj(d["o"], "o").items()})
        stats.prompt_tokens_total = integer(d["pt"], "pt")
        stats.generation_tokens_total = integer(d["gt"], "gt")
        stats.by_tenant = {
            tenant: cls.from_dict(obj(part, tenant)) for tenant, part in obj(d.get("t") or {}, "t").items()
        }
        return stats

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassicStats):
            return NotImplemented
        return (
            self.counts == other.counts
            and self.sums == other.sums
            and self.outcomes == other.outcomes
            and self.prompt_tokens_total == other.prompt_tokens_total
            and self.by_tenant == other.by_tenant
            and self.generation_tokens_total == other.generation_tokens_total
        )

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by value, never hashed

    def __repr__(self) -> str:
        return f"ClassicStats(requests={sum(self.outcomes.values())}, outcomes={dict(self.outcomes)})"
