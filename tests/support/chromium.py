"""Headless Chromium for the tests that render pages: the report, and Locust's web UI.

Debian's ``chromium`` (scripts/install-test-deps.sh installs it as root). Every road to the
network is closed: the proxy points at a dead port and every host name fails to resolve, so a
page that tried to fetch anything from outside would show it as missing. Loopback addresses
are not proxied, so a page served on 127.0.0.1 (Locust's UI) loads and polls as in a browser.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
MISSING = (
    "headless Chromium is not installed at /usr/bin/chromium "
    "(Debian package `chromium`: apt-get install -y chromium)"
)
FLAGS = (
    "--headless",
    "--no-sandbox",  # containers run as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)


def chromium(profile: Path, *args: str, timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Run it once with ``args`` (``--dump-dom URL``, ``--screenshot=PATH URL``, ...) and a
    profile directory of its own."""
    return subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def keep(shot: Path, min_colors: int = 50) -> None:
    """Not a blank page (text and table lines make colours), and kept where CI collects
    artifacts (``$LLMLOAD_ARTIFACTS``; otherwise it stays in the test's directory)."""
    from PIL import Image

    with Image.open(shot) as image:
        colors = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > min_colors, shot
    artifacts = os.environ.get("LLMLOAD_ARTIFACTS")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, artifacts)
