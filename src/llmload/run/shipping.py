"""Worker side of the fleet protocol: ship a ``Delta`` (``delta.py``) to the master every few
seconds, and a final one once the worker's users have stopped."""

from __future__ import annotations

from collections.abc import Callable

import gevent

from llmload.metrics import wire
from llmload.protocol.jsonvalue import JSON
from llmload.run.delta import MESSAGE, Delta
from llmload.run.process_run import ProcessRun

PHASE = "llmload_phase"
# A worker's handlers are registered: the master may probe its clock and tell it the phase. It
# connects (Locust's client_ready) before llmload's init runs, and a message of a type it has
# not registered yet is dropped with a warning on the user's console.
READY = "llmload_ready"


class Shipper:
    def __init__(
        self,
        session: ProcessRun,
        send: Callable[[str, dict[str, JSON]], None],
        users: Callable[[], int],
        interval_s: float = 2.0,
    ) -> None:
        self._session = session
        self._send = send
        self._users = users
        self._interval_s = interval_s
        self._seq = 0
        self._greenlet: gevent.Greenlet[[], None] | None = None
        self._stopped = False
        self.final_sent = False

    def start(self) -> None:
        if self._greenlet is None:
            self._greenlet = gevent.spawn(self._loop)

    def _loop(self) -> None:
        while True:
            gevent.sleep(self._interval_s)
            # A sleep that ended just before ``stop`` wakes this greenlet ahead of the kill:
            # it must not ship a delta behind the final one.
            if self._stopped:
                return
            self.ship(final=False)

    def ship(self, *, final: bool) -> None:
        s = self._session
        delta = Delta(
            seq=self._seq,
            name=s.process_tag,
            records_file=s.records.path.name,
            final=final,
            model=s.model,
            stages=s.take_stats(),
            classic=s.take_classic(),
            timeseries=s.take_timeseries(),
            users=self._users(),
            in_flight=s.in_flight,
            records=s.records.count,
            tokens_received=s.tokens_received(),
            completed=s.completed(),
            in_flight_measured=s.in_flight_measured(),
            sent_measured=s.sent_measured(),
            health_now=s.health_now(),
            health={k: st.health for k, st in s.stages.items() if st.health is not None},
            lateness={k: st.lateness_s for k, st in s.stages.items()},
            warnings=tuple(s.warnings),
            stopped=s.stopped,
        )
        self._seq += 1
        self._send(MESSAGE, wire.encode(delta))
        if final:
            self.final_sent = True

    def stop(self) -> None:
        self._stopped = True
        if self._greenlet is not None:
            self._greenlet.kill(block=False)
            self._greenlet = None
