"""Worker side of the fleet protocol: ship stats deltas to the master, and a final one.

Message ``llmload_delta`` (worker → master), bounded in size whatever the request count::

    {seq, name, model, final, stages: {stage: StageStats dict}, timeseries, classic, in_flight,
     health_now, completed: {stage: n}, in_flight_measured: {stage: n},
     health: {stage: snapshot}, lateness: {stage: {phase: s}}, users, tokens_received, records,
     records_file, warnings: [...], stopped: null | {by, ...}}

``stopped`` is set once the worker's run must end early: its first requests all failed the
same way (``failfast.py``: the master stops the fleet) or it was interrupted.

``seq`` increases by one per message so a duplicate is never merged twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gevent

from llmload.run.session import Session

DELTA = "llmload_delta"
PHASE = "llmload_phase"


class Shipper:
    def __init__(self, session: Session, send: Callable[[str, dict[str, Any]], None],
                 users: Callable[[], int], interval_s: float = 2.0) -> None:
        self._session = session
        self._send = send
        self._users = users
        self._interval_s = interval_s
        self._seq = 0
        self._greenlet: gevent.Greenlet[Any, None] | None = None
        self.final_sent = False

    def start(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._loop)

    def _loop(self) -> None:
        while True:
            gevent.sleep(self._interval_s)
            self.ship(final=False)

    def ship(self, *, final: bool) -> None:
        s = self._session
        stages = {str(k): v.to_dict() for k, v in s.take_stats().items()}
        payload = {
            "seq": self._seq,
            "name": s.process_tag,
            "model": s.model,
            "final": final,
            "stages": stages,
            "timeseries": s.take_timeseries().to_dict(),
            "classic": {str(k): v.to_dict() for k, v in s.take_classic().items()},
            "in_flight": s.in_flight,
            "health_now": s.health_now(),
            "completed": {str(k): v for k, v in s.completed().items()},
            "in_flight_measured": {str(k): v for k, v in s.in_flight_measured().items()},
            "health": {str(k): st.health for k, st in s.stages.items() if st.health is not None},
            "lateness": {str(k): st.lateness_s for k, st in s.stages.items()},
            "users": self._users(),
            "tokens_received": s.tokens_received(),
            "records": s.records.count,
            "records_file": s.records.path.name,
            "warnings": s.warnings,
            "stopped": s.stopped,
        }
        self._seq += 1
        self._send(DELTA, payload)
        if final:
            self.final_sent = True

    def stop(self) -> None:
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None
