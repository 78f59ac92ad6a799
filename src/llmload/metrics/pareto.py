"""The Pareto frontier of a set of (x, y) points: those no other point beats on both axes.

Serving trades speed per user against total throughput: more concurrency raises the fleet's
tok/s and lowers each stream's. A configuration (engine, flags, concurrency) is worth running
only if no other one is at least as good on both counts and better on one; the frontier is
those configurations, and everything under it is dominated.
"""

from __future__ import annotations

from collections.abc import Sequence


def frontier(points: Sequence[tuple[float, float]], *, maximize_y: bool = True) -> list[int]:
    """Indices of the non-dominated points, ordered by x ascending; x is always maximised.

    A point dominates another when it is at least as good on both axes and better on one;
    duplicates keep their first index.
    """
    sign = 1.0 if maximize_y else -1.0
    order = sorted(range(len(points)), key=lambda i: (-points[i][0], -sign * points[i][1], i))
    kept: list[int] = []
    best: float | None = None  # the best y among points with a larger x
    for i in order:
        y = sign * points[i][1]
        if best is None or y > best:
            kept.append(i)
            best = y
    return sorted(kept, key=lambda i: (points[i][0], i))
