"""Finished records are counted at once and folded when the event loop is idle, never lost.

Folding (the JSON line, stage stats, series) is kept off the request path so that it does not
delay other streams' reads; these tests pin down what that must not change: every reader sees
every finished record, the queue is bounded, and closing folds what is left.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import gevent
import pytest

from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.export.results import read_records
from llmload.run import fold as fold_module
from llmload.run.process_run import ProcessRun
from tests.support.prometheus import synthetic_records
from tests.support.session import config, measuring


@pytest.fixture
def session(tmp_path: Path) -> Iterator[ProcessRun]:
    s = measuring(tmp_path, 4)
    yield s
    s.close()


def finish(s: ProcessRun, n: int, seed: int = 1) -> None:
    for r in synthetic_records(random.Random(seed), n):
        s.request_started(0, s.stages[0].window)
        s.on_record(r, counted_in_flight=False)


def folded(s: ProcessRun) -> int:
    return s.stages[0].stats.counts.records


def test_counted_at_once_folded_when_the_loop_is_idle(session: ProcessRun) -> None:
    finish(session, 3)
    assert session.in_flight == 0 and session.completed() == {0: 3}  # what paces the run
    assert folded(session) == 0 and session.records.count == 0  # nothing yielded yet
    gevent.sleep(0.05)
    assert folded(session) == 3 and session.records.count == 3


def test_every_reader_sees_every_finished_record(session: ProcessRun) -> None:
    finish(session, 5)
    views = session.views()
    assert views[0].stats.counts.records == 5
    finish(session, 2, seed=2)
    taken = session.take_stats()
    assert taken[0].counts.records == 7  # all so far
    finish(session, 1, seed=3)
    assert session.describe()["records"] == 8


def test_a_loop_never_idle_folds_on_the_request_path(
    session: ProcessRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fold_module, "_MAX_PENDING", 8)
    finish(session, 30)  # no yield in between: the folder never runs
    assert session.records.count >= 22  # at most 8 wait
    assert folded(session) == session.records.count


def test_close_folds_what_is_pending(tmp_path: Path) -> None:
    s = ProcessRun(config(tmp_path))
    s.apply(Announcement(0, Phase.WARMUP, time.time(), 1))
    finish(s, 4)
    s.close()
    assert len(read_records(tmp_path / "run" / "requests.jsonl")) == 4


def test_a_record_the_folder_left_half_done_is_finished_by_a_reader(session: ProcessRun) -> None:
    """The folder greenlet folds a record in steps with the loop's reads in between; a reader
    that comes in between sees it whole, and once."""
    finish(session, 3)
    for _ in range(10):  # the folder takes the first record and stops after its first step
        if session.records.count:
            break
        gevent.idle()
    assert session.records.count == 1 and folded(session) < session.records.count
    taken = session.take_stats()
    assert taken[0].counts.records == 3
    assert session.records.count == 3
    gevent.sleep(0.05)  # the folder resumes on the step it had left: nothing is added twice
    assert session.records.count == 3 and folded(session) == 0  # taken: deltas start again
