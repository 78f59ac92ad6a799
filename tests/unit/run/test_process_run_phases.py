"""A worker applies the conductor's phase changes once each, however often it hears them: the
master's broadcast and the history it sends a joiner can both bring the same one."""

from __future__ import annotations

from pathlib import Path

from llmload.core.phases import Phase
from llmload.core.stages import Announcement
from llmload.run.process_run import ProcessRun
from tests.support.session import config


def test_an_announcement_heard_again_changes_nothing(tmp_path: Path) -> None:
    run = ProcessRun(config(tmp_path))
    history = [
        Announcement(0, Phase.WARMUP, 100.0, 2),
        Announcement(0, Phase.MEASURE, 101.0, 2),
        Announcement(0, Phase.DRAIN, 104.0, 2),
        Announcement(1, Phase.WARMUP, 105.0, 4),
    ]
    for a in history:
        run.apply(a)
    window = run.stages[0].window
    opened, closed = window.t0_ns, window.t1_ns
    for a in history:  # the history again, as a joiner's greeting brings it
        run.apply(a)
    assert run.stage == 1 and not run.stages[1].closed and run.stages[0].closed
    assert (window.t0_ns, window.t1_ns) == (opened, closed)
    assert len(run.announcements) == len(history)
    run.close()
