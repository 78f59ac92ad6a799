"""Driving a report or comparison page in headless Chromium (Playwright), as a reader would:
hover, drag to zoom, toggle a series, filter the requests table. Every page is opened from
``file://`` with the network closed (tests/support/chromium.py), and every console error and
request the page makes is collected for the test to assert on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from tests.support.chromium import CHROMIUM, FLAGS


@dataclass
class Page:
    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def charts(self) -> list[str]:
        names: list[str] = self.page.evaluate("Object.keys(window.llmloadCharts.drawn)")
        return names

    def inked(self, chart: str) -> int:
        """Pixels of the chart's canvas that are not blank: a drawn chart has many."""
        count: int = self.page.evaluate(
            """(name) => { const u = window.llmloadCharts.drawn[name];
                const d = u.ctx.getImageData(0, 0, u.ctx.canvas.width, u.ctx.canvas.height).data;
                let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }""",
            chart,
        )
        return count

    def _over(self, chart: str) -> dict[str, float]:
        box: dict[str, float] = self.page.evaluate(
            """(name) => { const r = window.llmloadCharts.drawn[name].over.getBoundingClientRect();
                return {x: r.left, y: r.top, width: r.width, height: r.height}; }""",
            chart,
        )
        return box

    def hover(self, chart: str, x: float, series: int) -> str:
        """Move the mouse onto ``x`` of ``chart``; returns the legend's value for ``series``
        (1 = the first series after x)."""
        self.page.locator(f'[data-chart="{chart}"]').scroll_into_view_if_needed()
        box = self._over(chart)
        left: float = self.page.evaluate(
            "([name, x]) => window.llmloadCharts.drawn[name].valToPos(x, 'x')", [chart, x]
        )
        # a point on the plot's right edge is hovered from just inside it
        self.page.mouse.move(box["x"] + min(left, box["width"] - 1), box["y"] + box["height"] / 2)
        text: str = self.page.evaluate(
            """([name, i]) => window.llmloadCharts.drawn[name].root
                .querySelectorAll('.u-legend .u-series')[i].querySelector('.u-value').textContent""",
            [chart, series],
        )
        return text

    def x_range(self, chart: str) -> tuple[float, float]:
        lo, hi = self.page.evaluate(
            "(name) => { const s = window.llmloadCharts.drawn[name].scales.x; return [s.min, s.max]; }", chart
        )
        return float(lo), float(hi)

    def drag(self, chart: str, start: float, end: float) -> None:
        """Drag across the chart from ``start`` to ``end``, as shares of its plot's width."""
        self.page.locator(f'[data-chart="{chart}"]').scroll_into_view_if_needed()
        box = self._over(chart)
        y = box["y"] + box["height"] / 2
        self.page.mouse.move(box["x"] + box["width"] * start, y)
        self.page.mouse.down()
        self.page.mouse.move(box["x"] + box["width"] * end, y, steps=8)
        self.page.mouse.up()

    def wheel(self, chart: str, notches: int) -> None:
        """Turn the mouse wheel over the chart's middle (down: positive)."""
        box = self._over(chart)
        self.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        for _ in range(abs(notches)):
            self.page.mouse.wheel(0, 100 if notches > 0 else -100)
        self.page.wait_for_timeout(100)

    def toggle(self, chart: str, series: int) -> bool:
        """Click a legend entry; returns whether that series is shown after the click."""
        self.page.locator(f'[data-chart="{chart}"] .u-legend .u-series').nth(series).click()
        shown: bool = self.page.evaluate(
            "([name, i]) => window.llmloadCharts.drawn[name].series[i].show", [chart, series]
        )
        return shown

    def table_rows(self) -> list[list[str]]:
        rows: list[list[str]] = self.page.evaluate(
            """() => [...document.querySelectorAll('#requests-table tbody tr')]
                .map(tr => [...tr.children].map(td => td.textContent))"""
        )
        return rows


@contextmanager
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=list(FLAGS[1:]))
        try:
            yield chromium
        finally:
            chromium.close()


def open_page(chromium: Any, path: Path) -> Page:
    tab = chromium.new_page(viewport={"width": 1280, "height": 900})
    page = Page(tab)
    tab.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: page.errors.append(str(e)))
    tab.on("request", lambda r: page.requests.append(r.url))
    tab.goto(path.as_uri())
    tab.wait_for_function("window.llmloadCharts && window.llmloadCharts.drawn")
    return page


def legend(value: float) -> str:
    """``value`` as the pages' legends write it: ``toLocaleString("en-US")`` with two places,
    which rounds the number's shortest decimal form half away from zero (ECMA-402's
    "halfExpand"). Python's ``f"{v:.2f}"`` rounds the binary value instead, and for a summary's
    three-place 140.545 (stored just under it) says 140.54 where the page says 140.55."""
    rounded = Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{rounded:,.2f}"
