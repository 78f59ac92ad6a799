"""report.html renders, every plot included, in headless Chromium with networking off."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from llmload.export.report import write_report
from tests.support.chromium import CHROMIUM, MISSING
from tests.support.chromium import chromium as run_chromium

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
# Appended to a copy of the page only: counts the images the browser actually decoded.
_PROBE = (
    "<script>window.addEventListener('load',function(){var i=[].slice.call(document.images);"
    "var ok=i.filter(function(x){return x.complete&&x.naturalWidth>0}).length;"
    "var p=document.createElement('pre');p.id='probe';p.textContent='images '+i.length+' decoded '+ok;"
    "document.body.appendChild(p);});</script>"
)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=MISSING),
]


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_chromium(tmp_path / "profile", *args)


@pytest.fixture
def report(tmp_path: Path) -> Path:
    run = Path(shutil.copytree(FIXTURES / "engine-b", tmp_path / "engine-b"))
    shutil.copy(FIXTURES / "engine-a" / "timeseries.csv", run)  # so the timeline is drawn too
    return write_report(run)


def test_screenshot_is_not_blank(report: Path, tmp_path: Path) -> None:
    from PIL import Image

    shot = tmp_path / "report.png"
    proc = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1280,2400", report.as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1280, 2400)
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 200  # text, tables, warning box and plots


def test_every_plot_is_decoded(report: Path, tmp_path: Path) -> None:
    html = report.read_text(encoding="utf-8")
    plots = html.count('src="data:image/png;base64,')
    assert plots == len(list(report.parent.glob("*.png"))) == 8
    # The page forbids scripts; the probe copy allows its own inline one and nothing else.
    probe = tmp_path / "probe.html"
    probe.write_text(
        html.replace("default-src 'none';", "default-src 'none'; script-src 'unsafe-inline';").replace(
            "</body>", _PROBE + "</body>"
        ),
        encoding="utf-8",
    )
    proc = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", probe.as_uri())
    assert f'<pre id="probe">images {plots} decoded {plots}</pre>' in proc.stdout, proc.stderr[-2000:]
