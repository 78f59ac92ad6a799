"""Small statistics over raw samples (the benchmarks keep samples; llmload itself never does)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def pct(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (the lower sample at a tie), as docs/metrics.md defines it."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return float(ordered[rank - 1])


def summary_ms(values_ns: Sequence[int | float]) -> dict[str, float | int | None]:
    """p50/p99/max/mean in ms of samples in ns."""
    ms = [v / 1e6 for v in values_ns]
    out: dict[str, float | int | None] = {"count": len(ms)}
    for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        value = pct(ms, q)
        out[f"{name}_ms"] = None if value is None else round(value, 3)
    out["max_ms"] = round(max(ms), 3) if ms else None
    out["mean_ms"] = round(statistics.fmean(ms), 3) if ms else None
    return out


def median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def slope(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares slope and its standard error."""
    n = len(xs)
    if n < 3:
        return float("nan"), float("nan")
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    a = my - b * mx
    residual = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys, strict=True))
    return b, math.sqrt(residual / (n - 2) / sxx)
