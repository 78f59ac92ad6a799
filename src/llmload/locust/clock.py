"""Clock probes between the master and its workers (the estimate itself: ``core/clock.py``).

The master probes each worker as it connects and again every ``REPROBE_S`` (a clock that NTP
steps mid-run is followed), a burst of ``PROBES`` round trips each time, and tells the worker the
offset the shortest one gives. The worker answers a probe at once with its wall clock, and from
then on places its phase edges and per-second series on the master's clock.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import gevent
from locust.env import Environment
from locust.rpc import Message
from locust.runners import MasterRunner, WorkerRunner

from llmload.core.clock import ClockOffset, ClockProbe, estimate
from llmload.protocol.jsonvalue import integer, number, obj

PROBE, REPLY, OFFSET = "llmload_clock_probe", "llmload_clock_reply", "llmload_clock_offset"
PROBES = 8
SPACING_S = 0.02  # apart, so one stall of either loop delays one probe, not the burst
REPLY_WAIT_S = 1.0
REPROBE_S = 30.0


class MasterClocks:
    """The master's side: one greenlet per connected worker, probing it while it stays."""

    def __init__(self, runner: MasterRunner) -> None:
        self._runner = runner
        self._probes: dict[str, list[ClockProbe]] = {}
        self._probing: set[str] = set()
        self.offsets: dict[str, ClockOffset] = {}  # by client id, as last estimated
        runner.register_message(REPLY, self._on_reply)

    def follow(self, client_id: str) -> None:
        if client_id not in self._probing:
            self._probing.add(client_id)
            gevent.spawn(self._keep, client_id)

    def _keep(self, client_id: str) -> None:
        try:
            while client_id in self._runner.clients:
                self._burst(client_id)
                gevent.sleep(REPROBE_S)
        finally:
            self._probing.discard(client_id)

    def _burst(self, client_id: str) -> None:
        probes = self._probes[client_id] = []
        for _ in range(PROBES):
            self._runner.send_message(PROBE, {"sent_ns": time.time_ns()}, client_id=client_id)
            gevent.sleep(SPACING_S)
        deadline = time.monotonic() + REPLY_WAIT_S
        while len(probes) < PROBES and time.monotonic() < deadline:
            gevent.sleep(SPACING_S)
        del self._probes[client_id]
        found = estimate(probes)
        if found is None:
            return
        first = client_id not in self.offsets
        self.offsets[client_id] = found
        self._runner.send_message(
            OFFSET, {"offset_s": found.offset_s, "uncertainty_s": found.uncertainty_s}, client_id=client_id
        )
        if first:
            print(
                f"llmload: {client_id}'s clock is {found.offset_s * 1e3:+.1f} ms against the "
                f"master's (within {found.uncertainty_s * 1e3:.1f} ms, {found.probes} probes)",
                file=sys.stderr,
                flush=True,
            )

    def _on_reply(self, environment: Environment, msg: Message) -> None:
        received_ns = time.time_ns()
        probes = self._probes.get(msg.node_id)
        if probes is not None:
            data = obj(msg.data, "clock reply")
            sent_ns, worker_ns = integer(data["sent_ns"], "sent_ns"), integer(data["worker_ns"], "worker_ns")
            probes.append(ClockProbe(sent_ns, worker_ns, received_ns))


class WorkerClock:
    """The worker's side: answers probes, and keeps the offset the master last sent."""

    def __init__(self, runner: WorkerRunner, on_offset: Callable[[float], None]) -> None:
        self._runner = runner
        self._on_offset = on_offset
        self.offset_s = 0.0  # until the master's first estimate: the clocks taken to agree
        runner.register_message(PROBE, self._on_probe)
        runner.register_message(OFFSET, self._on_estimate)

    def wall(self) -> float:
        """This process's wall clock, read on the master's."""
        return time.time() - self.offset_s

    def _on_probe(self, environment: Environment, msg: Message) -> None:
        sent_ns = integer(obj(msg.data, "clock probe")["sent_ns"], "sent_ns")
        self._runner.send_message(REPLY, {"sent_ns": sent_ns, "worker_ns": time.time_ns()})

    def _on_estimate(self, environment: Environment, msg: Message) -> None:
        self.offset_s = number(obj(msg.data, "clock offset")["offset_s"], "offset_s")
        self._on_offset(self.offset_s)
