"""The answer ``llmload tune`` gives: which configuration to run, under the objectives.

Every measured level of every configuration is a point; a point *meets* the objectives when its
stage met each ``--slo`` rule, kept its error rate within ``--max-error-rate`` and was not cut
short. The best configuration by throughput has the highest output tok/s at a point that meets
them; the best by cost the lowest $ per million output tokens at one. A configuration's
*highest level* is the highest concurrency (or rate) it was measured at that met them: how far it
can be pushed. Pure, from summaries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from llmload.metrics.slo import parse_max_error_rate
from llmload.protocol.jsonvalue import array, obj
from llmload.results.speculation import spec_decode
from llmload.results.summary import Summary
from llmload.results.summary_stage import Stage

DEFAULT_MAX_ERROR_RATE = 0.01  # --max-error-rate's default, as the verdict applies it


@dataclass(frozen=True, slots=True)
class Point:
    """One measured level of one configuration."""

    concurrency: int | None
    rate_req_per_s: float | None
    output_tok_per_s: float
    usd_per_m_output_tokens: float | None
    meets: bool
    tokens_per_chunk: float | None = None  # mean tokens per token-bearing event but the first
    acceptance_rate: float | None = None  # the server's speculative-decoding acceptance, if any

    @property
    def where(self) -> str:
        return f"C={self.concurrency}" if self.rate_req_per_s is None else f"{self.rate_req_per_s:g} req/s"

    @property
    def level(self) -> float:
        return self.rate_req_per_s if self.rate_req_per_s is not None else float(self.concurrency or 0)


@dataclass(frozen=True, slots=True)
class Candidate:
    name: str
    points: tuple[Point, ...]
    failed: str | None = None  # why it has no numbers (its server never ran, say)
    single_stream_tok_per_s: float | None = None  # one stream's decode speed, the sweep's headline
    disqualified: str = ""  # why it is not recommended whatever its numbers (its answers drifted)

    @property
    def met(self) -> tuple[Point, ...]:
        return () if self.disqualified else tuple(p for p in self.points if p.meets)

    @property
    def peak(self) -> Point | None:
        """The level of the highest throughput, whether or not it met the objectives."""
        return max(self.points, key=lambda p: p.output_tok_per_s, default=None)

    @property
    def highest(self) -> Point | None:
        """The highest level measured that met the objectives."""
        return max(self.met, key=lambda p: p.level, default=None)

    @property
    def best(self) -> Point | None:
        return max(self.met, key=lambda p: p.output_tok_per_s, default=None)

    @property
    def cheapest(self) -> Point | None:
        priced = [p for p in self.met if p.usd_per_m_output_tokens is not None]
        return min(priced, key=lambda p: p.usd_per_m_output_tokens or 0.0, default=None)


@dataclass(frozen=True, slots=True)
class Pick:
    name: str
    point: Point


@dataclass(frozen=True, slots=True)
class Choice:
    objectives: str  # the --slo text; "" when the sweeps had none
    candidates: tuple[Candidate, ...]
    by_throughput: Pick | None
    by_cost: Pick | None
    runner_up: Pick | None  # the best of the other configurations, by throughput

    def line(self) -> str:
        """The recommendation, in one line."""
        under = f"under {self.objectives!r}" if self.objectives else "(no --slo: every level counts)"
        best = self.by_throughput
        if best is None:
            tried = sum(len(c.points) for c in self.candidates)
            ruled = sum(bool(c.disqualified) for c in self.candidates)
            out = f"no configuration met the objectives {under} at any of the {tried} levels measured"
            return out + (f" ({ruled} ruled out: their answers drifted)" if ruled else "")
        text = f"best {under}: {best.name} at {best.point.where}, {best.point.output_tok_per_s:.1f} tok/s"
        if best.point.usd_per_m_output_tokens is not None:
            text += f", ${best.point.usd_per_m_output_tokens:.2f}/M"
        cost = self.by_cost
        if cost is not None and cost.name != best.name and cost.point.usd_per_m_output_tokens is not None:
            text += (
                f"; cheapest: {cost.name} at {cost.point.where}, ${cost.point.usd_per_m_output_tokens:.2f}/M"
                f" ({cost.point.output_tok_per_s:.1f} tok/s)"
            )
        if self.runner_up is not None:
            text += f"; {self.runner_up.name} reaches {self.runner_up.point.output_tok_per_s:.1f} tok/s"
        return text


def choose(candidates: Sequence[Candidate], objectives: str = "") -> Choice:
    best = [(c.name, p) for c in candidates if (p := c.best) is not None]
    ranked = sorted(best, key=lambda item: -item[1].output_tok_per_s)
    cheap = [(c.name, p) for c in candidates if (p := c.cheapest) is not None]
    cheapest = min(cheap, key=lambda item: item[1].usd_per_m_output_tokens or 0.0, default=None)
    return Choice(
        objectives,
        tuple(candidates),
        Pick(*ranked[0]) if ranked else None,
        Pick(*cheapest) if cheapest else None,
        Pick(*ranked[1]) if len(ranked) > 1 else None,
    )


def _checks(summary: Summary) -> tuple[str, float]:
    checks = obj(summary.run.options.get("checks") or {}, "options.checks")
    slo = ",".join(str(rule) for rule in array(checks.get("slo") or []))
    rate = checks.get("max_error_rate")
    limit = parse_max_error_rate(
        rate if isinstance(rate, str | float | int) and not isinstance(rate, bool) else None
    )
    return slo, DEFAULT_MAX_ERROR_RATE if limit is None else limit


def _meets(stage: Stage, max_error_rate: float) -> bool:
    slo_met = stage.slo is None or all(o.met for o in stage.slo)
    return slo_met and not stage.partial and (stage.error_rate or 0.0) <= max_error_rate


def candidate(name: str, summary: Summary) -> Candidate:
    """A configuration's points, from its sweep's summary."""
    _, limit = _checks(summary)
    points = tuple(
        Point(
            s.concurrency,
            s.rate_req_per_s,
            s.output_tok_per_s,
            s.cost.usd_per_m_output_tokens if s.cost else None,
            _meets(s, limit),
            s.tokens_per_event.mean if s.tokens_per_event else None,
            spec_decode(s)[0],
        )
        for s in summary.stages
        if s.output_tok_per_s is not None
    )
    single = summary.headline.single_stream_tok_per_s if summary.headline else None
    return Candidate(name, points, single_stream_tok_per_s=single)


def objectives_of(summaries: Mapping[str, Summary]) -> str:
    """The --slo the sweeps were judged by (the experiment gives every configuration the same)."""
    found = {_checks(s)[0] for s in summaries.values()}
    return next(iter(found)) if len(found) == 1 else " | ".join(sorted(found))
