"""The worker's shipper: its final delta is the last thing it sends, however its periodic
greenlet's sleep and the run's end fall."""

from __future__ import annotations

from pathlib import Path

import gevent

from llmload.protocol.jsonvalue import JSON
from llmload.run.shipping import Shipper
from tests.support.session import measuring


def test_a_stop_right_after_the_periodic_sleep_ended_ships_nothing_behind_the_final(tmp_path: Path) -> None:
    session = measuring(tmp_path, 1)
    sent: list[dict[str, JSON]] = []
    shipper = Shipper(session, lambda _kind, message: sent.append(message), users=lambda: 1, interval_s=0)
    try:
        shipper.start()
        gevent.sleep(0)  # its first sleep ends at once: its wake-up is queued ahead of the kill
        shipper.stop()
        shipper.ship(final=True)
        gevent.sleep(0.01)  # the periodic greenlet's turn, had it one
    finally:
        session.close()
    assert sent, "the final delta was not sent"
    assert [m["final"] for m in sent][-1] is True, [m["final"] for m in sent]
    assert [m["seq"] for m in sent] == sorted(m["seq"] for m in sent)
