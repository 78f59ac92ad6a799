"""Which chart library draws report.html: file size and Chromium render time, side by side.

    .venv/bin/python bench/chart_libraries.py [--points 100000] [--rounds 3] [--out PATH]

Each candidate is fetched from the npm registry at a pinned version (``npm pack``, cached in
``~/.cache/llmload/chart-libraries``), inlined into a page of its own as the report inlines its
library, and loaded from ``file://`` in Debian's headless Chromium (through Playwright). Timed
in the page with ``performance.now()``: the library script's evaluation, and one line chart of
``--points`` points (a request timeline's worth) from the constructor call to the second
animation frame after it, when the canvas or SVG has been painted. Every round starts a fresh
page; reported is each candidate's median round. Sizes are the minified file and its gzip.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "chart_libraries.json"
CACHE = Path.home() / ".cache" / "llmload" / "chart-libraries"
CHROMIUM = "/usr/bin/chromium"

# (name, npm package@version, file in the package, licence, page body drawing DATA into #c)
CANDIDATES = (
    (
        "uPlot",
        "uplot@1.6.32",
        "package/dist/uPlot.iife.min.js",
        "MIT",
        "new uPlot({width: 900, height: 320, series: [{}, {stroke: 'blue'}]}, [DATA.x, DATA.y],"
        " document.getElementById('c'));",
    ),
    (
        "ECharts",
        "echarts@6.0.0",
        "package/dist/echarts.min.js",
        "Apache-2.0",
        "var c = document.getElementById('c'); c.style.width = '900px'; c.style.height = '320px';"
        "echarts.init(c, null, {renderer: 'canvas'}).setOption({animation: false,"
        " xAxis: {type: 'value'}, yAxis: {type: 'value'},"
        " series: [{type: 'line', showSymbol: false, data: DATA.x.map(function (x, i) {"
        " return [x, DATA.y[i]]; })}]});",
    ),
    (
        "Plotly",
        "plotly.js-dist-min@3.1.2",
        "package/plotly.min.js",
        "MIT",
        "Plotly.newPlot('c', [{x: DATA.x, y: DATA.y, type: 'scatter', mode: 'lines'}],"
        " {width: 900, height: 320});",
    ),
)


def library(spec: str, member: str) -> bytes:
    """The package's file, from the cache or freshly packed from the registry."""
    CACHE.mkdir(parents=True, exist_ok=True)
    name = spec.replace("@", "-").replace("/", "-")
    tgz = CACHE / f"{name}.tgz"
    if not tgz.exists():
        out = subprocess.run(
            ["npm", "pack", spec, "--silent", "--pack-destination", str(CACHE)],
            capture_output=True,
            text=True,
            check=True,
        )
        (CACHE / out.stdout.strip().splitlines()[-1]).rename(tgz)
    with tarfile.open(tgz) as tar:
        handle = tar.extractfile(member)
        assert handle is not None, (spec, member)
        return handle.read()


def page(script: bytes, draw: str, points: int) -> str:
    xs = [i * 0.01 for i in range(points)]
    ys = [(i * 7919) % 1000 for i in range(points)]
    data = json.dumps({"x": xs, "y": ys})
    return (
        "<!doctype html><html><body><div id='c'></div>"
        "<script>window.T0 = performance.now();</script>"
        f"<script>{script.decode()}</script>"
        "<script>window.EVAL_MS = performance.now() - window.T0;"
        f"var DATA = {data};"
        "window.go = function () { return new Promise(function (done) {"
        f" var t = performance.now(); {draw}"
        " requestAnimationFrame(function () { requestAnimationFrame(function () {"
        " done({eval_ms: window.EVAL_MS, draw_ms: performance.now() - t}); }); }); }); };"
        "</script></body></html>"
    )


def measure(points: int, rounds: int, work: Path) -> list[dict[str, object]]:
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        for name, spec, member, licence, draw in CANDIDATES:
            script = library(spec, member)
            path = work / f"{name}.html"
            path.write_text(page(script, draw, points), encoding="utf-8")
            evals, draws = [], []
            for _ in range(rounds):
                tab = browser.new_page()
                errors: list[str] = []
                tab.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                tab.goto(path.as_uri())
                result = tab.evaluate("window.go()")
                assert not errors, (name, errors)
                evals.append(result["eval_ms"])
                draws.append(result["draw_ms"])
                tab.close()
            rows.append(
                {
                    "library": name,
                    "package": spec,
                    "licence": licence,
                    "min_kb": round(len(script) / 1024, 1),
                    "gzip_kb": round(len(gzip.compress(script)) / 1024, 1),
                    "eval_ms": round(statistics.median(evals), 1),
                    "draw_ms": round(statistics.median(draws), 1),
                }
            )
        browser.close()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--points", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args()
    work = CACHE / "pages"
    work.mkdir(parents=True, exist_ok=True)
    rows = measure(args.points, args.rounds, work)
    heads = ("min KiB", "gzip KiB", "eval ms", "draw ms")
    print(f"{'library':10} {'package':28} {'licence':11} " + " ".join(f"{h:>9}" for h in heads))
    for r in rows:
        print(
            f"{r['library']:10} {r['package']:28} {r['licence']:11} "
            + " ".join(f"{r[k]:>9}" for k in ("min_kb", "gzip_kb", "eval_ms", "draw_ms"))
        )
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO, check=False
    )
    args.out.write_text(
        json.dumps(
            {
                "command": " ".join(["bench/chart_libraries.py", *sys.argv[1:]]),
                "revision": rev.stdout.strip(),
                "date": time.strftime("%Y-%m-%d"),
                "points": args.points,
                "rounds": args.rounds,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
