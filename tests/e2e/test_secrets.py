"""Secrets never printed: a canary key passed every way a user can pass one never appears in
anything a run writes or shows: stdout and stderr at DEBUG, the results directory, the live
/metrics, the echoed command lines and the rejection of a URL with a password."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO
from tests.support.fleet import own_master_port

pytestmark = pytest.mark.e2e
ENV_KEY = "sk-canary-env-7f3a9c2e1b"
HEADER_KEY = "sk-canary-header-5d8e0a4c3f"
URL_PASSWORD = "canary-url-pw-91b2"
CANARIES = (ENV_KEY, HEADER_KEY, URL_PASSWORD)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def leaks(text: str) -> list[str]:
    return [c for c in CANARIES if c in text]


def results_text(root: Path) -> str:
    return "".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("processes", [0, 2], ids=["local", "distributed"])
def test_no_output_of_a_run_holds_a_secret(tmp_path: Path, processes: int) -> None:
    port = free_port()
    env = {**os.environ, "OPENAI_API_KEY": ENV_KEY}
    scraped: list[str] = []

    def scrape() -> None:  # the live endpoint, while the run goes and while it lingers
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    scraped.append(r.read().decode())
            except OSError:
                pass
            time.sleep(0.5)

    with start_sim(["--ttft-ms", "5", "--step-ms", "2"]) as sim:
        command = [
            sys.executable,
            "-m",
            "llmload.cli",
            "sweep",
            "--host",
            sim.url,
            "--no-wait",
            "--levels",
            "2",
            "--stage-s",
            "3",
            "--max-tokens",
            "8",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "canary",
            "--processes",
            str(processes),
            "--",
            *own_master_port(["--processes"] if processes else []),
            "--loglevel",
            "DEBUG",
            "--extra-header",
            f"Authorization: Bearer {HEADER_KEY}",
            "--prometheus-port",
            str(port),
            "--prometheus-linger-s",
            "2",
        ]
        scraper = threading.Thread(target=scrape, daemon=True)
        scraper.start()
        proc = subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, timeout=180, env=env, check=False
        )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-3000:]
    assert "Authorization: ***" in output  # the echoed command line, masked
    assert scraped and "llmload_run_info" in scraped[-1]
    assert leaks(output) == []
    assert leaks(results_text(tmp_path)) == []
    assert leaks("".join(scraped)) == []


def test_a_password_in_the_url_is_refused_without_being_echoed(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(REPO / "locustfiles/chat.py"),
        "--headless",
        "-u",
        "1",
        "-t",
        "2s",
        "--host",
        f"http://user:{URL_PASSWORD}@127.0.0.1:9",
        "--results-dir",
        str(tmp_path),
        "--loglevel",
        "DEBUG",
    ]
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output[-3000:]
    assert "credentials do not belong in the URL" in output and "user:***@" in output
    assert leaks(output) == [] and leaks(results_text(tmp_path)) == []
