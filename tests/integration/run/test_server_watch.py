"""The server watch against the real simulator: a run's end while its ``/metrics`` poller is
between polls leaves no traceback behind (a CI run's Ctrl+C once printed one)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import gevent
import pytest

from llmload.run.server_watch import ServerWatch
from llmload.sim.process import SimProcess, start_sim
from tests.support.session import config

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcess]:
    with start_sim(["--seed", "1"]) as process:
        yield process


def test_a_stop_right_after_the_pollers_sleep_ended_polls_no_closed_client(
    sim: SimProcess, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # With no interval the poller's first sleep ends at once: its wake-up is queued when this
    # greenlet gets the loop back, ahead of the kill that stop queues behind it.
    watch = ServerWatch(config(tmp_path, sim.url), None, interval_s=0)
    watch.start()
    assert watch.info["metrics_endpoint"] is True  # the poller runs: the case under test
    gevent.sleep(0)
    watch.stop()
    gevent.sleep(0.05)  # the poller's turn, had it one
    err = capfd.readouterr().err
    assert "Traceback" not in err and "client has been closed" not in err, err
