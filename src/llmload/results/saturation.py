"""Saturation: the lowest load level past which more load buys latency, not throughput.

A level saturates the server when, at the next level up,

- output tok/s stops growing: the gain is no larger than the noise, where the noise is
  ``GAIN_THRESHOLD`` (5%) of this level's tok/s, widened to either level's repeat spread
  (max - min across ``--repeat``) when the repeats vary more than that; a fall counts too (an
  interior peak), and
- latency climbs: TPOT p50 or TTFT p50 grows by more than the same ``GAIN_THRESHOLD``.

Both, because either alone is not saturation: throughput flat at flat latency is a client or a
workload limit, and latency rising while throughput still grows is the batch filling up, the
price of throughput rather than its end. A floor under the spread, because a simulator's or a
quiet server's repeats agree to a fraction of a percent, and a plateau's +0.3% would then read
as growth.

The same rule serves concurrency sweeps and rate sweeps: it reads the headline's levels in the
order of their load. Pure: no I/O, callable mid-run on the stages so far (``--until-saturated``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from llmload.metrics.catalog import stat_header
from llmload.results.summary import Level, Saturation

GAIN_THRESHOLD = 0.05


def detect(levels: Sequence[Level], threshold: float = GAIN_THRESHOLD) -> Saturation | None:
    """The lowest saturated level, or None while every next level still pays off.

    ``levels``: the headline's, sorted by load; with both kinds present (an odd run), the
    concurrency levels are read."""
    series = [lv for lv in levels if lv.concurrency is not None] or [
        lv for lv in levels if lv.rate_req_per_s is not None
    ]
    for here, above in pairwise(series):
        flat = _flat(here, above, threshold)
        if flat is None:
            continue
        climbs = _climbs(here, above, threshold)
        if not climbs:
            continue
        return Saturation(
            concurrency=here.concurrency,
            rate_req_per_s=here.rate_req_per_s,
            output_tok_per_s=here.output_tok_per_s,
            reason=f"{flat} while {' and '.join(climbs)}",
        )
    return None


def label(level: Level | Saturation) -> str:
    if level.rate_req_per_s is not None:
        return f"{level.rate_req_per_s:g} req/s"
    return f"C={level.concurrency}"


def _width(level: Level) -> float:
    low, high = level.spread
    return high - low


def _flat(here: Level, above: Level, threshold: float) -> str | None:
    """Why ``above`` bought no throughput over ``here``, or None when it did."""
    base = here.output_tok_per_s
    if base <= 0:
        return None
    gain = above.output_tok_per_s - base
    floor = threshold * base
    noise = max(floor, _width(here), _width(above))
    if gain > noise:
        return None
    within = f"the {threshold:.0%} threshold" if noise == floor else "the repeats' spread"
    return (
        f"output tok/s {gain / base:+.1%} from {label(here)} to {label(above)}"
        f" ({base:,.1f} -> {above.output_tok_per_s:,.1f}, within {within})"
    )


def _climbs(here: Level, above: Level, threshold: float) -> list[str]:
    out = []
    for name, low, high in (
        (stat_header("tpot", "p50"), here.tpot_p50_ms, above.tpot_p50_ms),
        (stat_header("ttft", "p50"), here.ttft_p50_ms, above.ttft_p50_ms),
    ):
        if low is not None and high is not None and low > 0 and high > low * (1 + threshold):
            out.append(f"{name} {high / low - 1:+.0%} ({low:,.1f} -> {high:,.1f} ms)")
    return out


def saturation_text(found: Saturation | None) -> str:
    """The headline's words for it, the same on the console and in the report."""
    if found is None:
        return "not reached (every level still bought throughput, or latency held)"
    text = f"{label(found)} ({found.output_tok_per_s:,.1f} output tok/s): {found.reason}"
    if found.stopped_sweep:
        skipped = ", ".join(found.levels_not_run)
        text += f"; --until-saturated ended the sweep at the level that showed it (not run: {skipped})"
    return text
