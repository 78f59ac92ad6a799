"""Drawing a ``FigureSpec`` as a PNG with matplotlib's Agg canvas.

matplotlib is the ``report`` extra (``pip install 'llmload[report]'``): nothing that measures
needs it, and a worker image need not carry it. Without it a report has every table and no
plots, and says how to get them. It is imported inside the functions: importing llmload (and a
Locust worker with it) must not pay for it. We build ``Figure`` objects with their own Agg
canvas instead of pyplot, so no global backend or figure registry is touched and concurrent
reports cannot interfere.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from llmload.export.series import FigureSpec, Series

if TYPE_CHECKING:
    from matplotlib.axes import Axes

NO_PLOTS = "No plots: they need matplotlib, the report extra (pip install 'llmload[report]')."
_SIZE_IN = (8.0, 4.5)
_DPI = 110


def _nan(values: Sequence[float | None]) -> list[float]:
    # matplotlib breaks lines at NaN: an absent value shows as a gap, never as a zero.
    return [math.nan if v is None else v for v in values]


def _draw(ax: Axes, s: Series, color: str) -> None:
    x, y = list(s.x), _nan(s.y)
    if s.step:
        ax.step(x, y, where="post", label=s.label, color=color, linewidth=1.2)
        return
    if s.dashed:
        ax.plot(x, y, "--", label=s.label, color="0.35", linewidth=1.2, zorder=0)
        return
    if s.low is not None and s.high is not None:
        # max(0, ...): a mean of equal repeats can round an ulp past its min or max, and
        # matplotlib refuses a negative error bar
        below = [
            0.0 if math.isnan(v) or lo is None else max(0.0, v - lo) for v, lo in zip(y, s.low, strict=True)
        ]
        above = [
            0.0 if math.isnan(v) or hi is None else max(0.0, hi - v) for v, hi in zip(y, s.high, strict=True)
        ]
        ax.errorbar(
            x,
            y,
            yerr=[below, above],
            fmt="o-",
            capsize=4,
            label=f"{s.label} (repeat spread)",
            color=color,
            linewidth=1.5,
            markersize=4,
        )
    else:
        ax.plot(x, y, "o-", label=s.label, color=color, linewidth=1.5, markersize=4)
    for xi, yi, text in zip(x, y, s.point_labels or (), strict=False):
        if not math.isnan(yi):
            ax.annotate(text, (xi, yi), textcoords="offset points", xytext=(5, 5), fontsize=8)


def _style_x(ax: Axes, spec: FigureSpec) -> None:
    if spec.xscale == "nines":
        ax.set_xscale("function", functions=(_nines, _unnines))
        ticks = [q for q in (0.5, 0.9, 0.99, 0.999, 0.9999) if q <= max(max(s.x) for s in spec.series)]
        ax.set_xticks(ticks, [f"p{100 * q:g}" for q in ticks])
        return
    if spec.xscale != "log2":
        return
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    ax.set_xscale("log", base=2)
    # Ticks at the levels themselves read "1 2 4 ... 128" rather than "2^0 2^1 ...".
    levels = sorted({x for s in spec.series for x in s.x})
    ax.xaxis.set_major_locator(FixedLocator(levels))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(ScalarFormatter())


def _nines(q: object) -> object:
    import numpy as np

    return -np.log10(1 - np.clip(q, 0, 1 - 1e-12))  # type: ignore[call-overload]


def _unnines(v: object) -> object:
    import numpy as np

    return 1 - np.power(10.0, -np.asarray(v))


def render(spec: FigureSpec) -> bytes:
    """The PNG of one figure."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=_SIZE_IN, dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    right = ax.twinx() if any(s.right_axis for s in spec.series) else None
    colors = [f"C{i}" for i in range(len(spec.series))]
    for s, color in zip(spec.series, colors, strict=True):
        _draw(right if s.right_axis and right is not None else ax, s, color)
    for x, label in spec.markers:
        ax.axvline(x, color="0.75", linewidth=0.8, linestyle="--")
        ax.annotate(
            label,
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(2, -10),
            textcoords="offset points",
            fontsize=7,
            color="0.4",
        )
    _style_x(ax, spec)
    ax.set(title=spec.title, xlabel=spec.xlabel, ylabel=spec.ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if right is not None:
        right.set_ylabel(spec.right_ylabel or "")
        right.set_ylim(bottom=0)
        more_handles, more_labels = right.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    if len(labels) > 1:
        ax.legend(handles, labels, fontsize=8, loc="best")
    buf = io.BytesIO()
    # No "Software" metadata: the default one carries matplotlib's web address into every file.
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def can_draw() -> bool:
    return find_spec("matplotlib") is not None


def write_pngs(specs: Sequence[FigureSpec], directory: Path) -> dict[str, bytes]:
    """Render every figure to ``<name>.png`` in ``directory``; returns the PNGs by name."""
    pngs = {}
    for spec in specs:
        png = render(spec)
        (directory / f"{spec.name}.png").write_bytes(png)
        pngs[spec.name] = png
    return pngs
