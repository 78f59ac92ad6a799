"""Real `locust` processes against a real simulator child process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.fleet import own_master_port, tokenize_flag
from tests.support.schema import read_checked
from tests.support.timing.ledger import TIER_ENV

REPO = Path(__file__).resolve().parents[2]


class LocustRun:
    def __init__(self, results: Path, proc: subprocess.CompletedProcess[str]) -> None:
        self.results = results
        self.returncode = proc.returncode
        self.output = proc.stdout + proc.stderr

    @property
    def summary(self) -> dict[str, Any]:
        return read_checked(self.results / "summary.json")

    @property
    def records(self) -> list[dict[str, Any]]:
        with (self.results / "requests.jsonl").open("rb") as f:
            return [orjson.loads(line) for line in f if line.strip()]


RunLocust = Callable[..., LocustRun]

# On a loaded machine (the waiting tier ran six tests at once on two cores) Locust's start and
# llmload's first look at the server took the whole of 3-4 s runs, and once of a 6 s one
# (fresh-clone CI, 2026-12-06: "no request was sent"; -t counts from before the first look). A
# shorter -t is raised to this: no claim of the suite rests on a run being short, and a longer
# one costs seconds, not a CI run. In the tiers that run one test at a time (make test's alone
# and proof) the test has the machine, and its own -t stands down to 4 s: raised to 8 s there,
# the identical-runs verdict test alone spent 20 s more.
MIN_RUN_S = 8
MIN_RUN_ALONE_S = 4


def at_least(run_time: str) -> str:
    """``run_time`` ("3s"), or the tier's floor where it is shorter."""
    alone = os.environ.get(TIER_ENV) in ("alone", "proof")
    seconds = MIN_RUN_ALONE_S if alone else MIN_RUN_S
    if run_time.endswith("s") and run_time[:-1].isdigit() and int(run_time[:-1]) < seconds:
        return f"{seconds}s"
    return run_time


@pytest.fixture
def run_locust(tmp_path: Path) -> RunLocust:
    runs = iter(range(1_000))

    def run(
        host: str,
        *args: str,
        locustfile: str = "locustfiles/chat.py",
        users: int = 8,
        run_time: str = "10s",
        timeout_s: float = 180,
        env: dict[str, str] | None = None,
        expect_code: int | None = 0,
        tokenize: str | None = "off",
    ) -> LocustRun:
        """``tokenize``: the ``--tokenize`` given unless ``args`` give one (``tokenize_flag``:
        the tier was written against words); None: the command line's default."""
        run_id = f"run{next(runs)}"
        command: Sequence[str] = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(REPO / locustfile),
            "--headless",
            "-u",
            str(users),
            "-r",
            str(users),
            "-t",
            at_least(run_time),
            "--host",
            host,
            "--results-dir",
            str(tmp_path),
            "--run-id",
            run_id,
            "--only-summary",
            "--loglevel",
            "WARNING",
            *args,
            *tokenize_flag(args, tokenize),
            *own_master_port(args),
        ]
        proc = subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, timeout=timeout_s, check=False, env=env
        )
        result = LocustRun(tmp_path / run_id, proc)
        if expect_code is not None:
            assert proc.returncode == expect_code, result.output[-4000:]
        return result

    return run
