"""Faults on demand: the ways a real server or proxy breaks a response, one mode each.

A fault is chosen for a request by ``--fault MODE[,MODE...]`` with ``--fault-rate P`` (drawn per
request, by arrival index, from the seed), or asked for by the request itself with the header
``X-Sim-Fault: MODE`` or the body field ``"sim_fault": "MODE"``. The mid-stream modes fire at the
event given by ``X-Sim-Fault-After`` / ``"sim_fault_after"`` (default: half of the request's
events, at least 1, so the first token always arrives); stalls last ``X-Sim-Stall-Ms`` /
``"sim_stall_ms"`` (default 1000 ms).

Modes fall in three groups: answered before any generation (``refuse``, ``reset``, the HTTP
errors), run through the engine with a hook in the stream (``FaultyGeneration``), and
``slow_drip``, which writes a finished response one byte at a time.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from llmload.sim.generation import Generation
from llmload.sim.render import LAST_CHUNK, frame

DEFAULT_STALL_MS = 1000
DRIP_INTERVAL_S = 0.1


class FaultMode(StrEnum):
    REFUSE = "refuse"  # close the connection as the request arrives, without a response
    RESET = "reset"  # TCP RST (SO_LINGER 0) before responding
    RESET_MID_STREAM = "reset_mid_stream"  # RST after some events
    STALL_FIRST = "stall_first"  # stall before the first token
    STALL_MID = "stall_mid"  # stall between two events
    HTTP_429 = "http_429"  # Too Many Requests with Retry-After
    HTTP_400 = "http_400"
    HTTP_500 = "http_500"
    CLOSE_NO_DONE = "close_no_done"  # every token, a clean end of body, no [DONE]
    CLOSE_MID_BODY = "close_mid_body"  # FIN mid-body: no [DONE], no last chunk
    BAD_FRAMING = "bad_framing"  # a chunk size that is not hex, then close
    BAD_SSE = "bad_sse"  # an event line without the "data:" field name
    BAD_JSON = "bad_json"  # an event whose JSON is cut short
    ERROR_EVENT = "error_event"  # {"error": {...}} inside the stream, then [DONE]
    SLOW_DRIP = "slow_drip"  # the response one byte per 100 ms


def parse_modes(text: str) -> tuple[FaultMode, ...]:
    """``MODE[,MODE...]``; raise ValueError naming an unknown mode."""
    modes = []
    for name in text.split(","):
        try:
            modes.append(FaultMode(name.strip()))
        except ValueError:
            known = ", ".join(m.value for m in FaultMode)
            raise ValueError(f"unknown fault mode {name.strip()!r} (known: {known})") from None
    return tuple(modes)


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """The faults given on the command line, and how often."""

    modes: tuple[FaultMode, ...] = ()
    rate: float = 1.0
    seed: int = 0
    first: int = 0  # when > 0, only the first ``first`` arrivals (indices 1..first) are faulted

    def draw(self, index: int) -> FaultMode | None:
        """The fault of the request with arrival ``index``; deterministic per seed and index."""
        if not self.modes or self.rate <= 0 or (self.first and index > self.first):
            return None
        rng = random.Random(self.seed * 1_000_003 + index)
        if rng.random() >= self.rate:
            return None
        return self.modes[rng.randrange(len(self.modes))]


# The modes that fire at one event of a running generation.
_MID_STREAM = frozenset(
    {
        FaultMode.RESET_MID_STREAM,
        FaultMode.STALL_MID,
        FaultMode.CLOSE_MID_BODY,
        FaultMode.BAD_FRAMING,
        FaultMode.BAD_SSE,
        FaultMode.BAD_JSON,
        FaultMode.ERROR_EVENT,
    }
)


class FaultyGeneration(Generation):
    """A generation that breaks at one event, the way its mode says."""

    __slots__ = ("fault_at", "mode", "stall_ns", "steps")
    fault_at: int
    mode: FaultMode
    stall_ns: int
    steps: int  # steps that produced tokens: events when streamed, counted the same when not

    def arm(self, mode: FaultMode, fault_after: int | None, stall_ms: int | None) -> None:
        self.mode = mode
        self.steps = 0
        self.stall_ns = (DEFAULT_STALL_MS if stall_ms is None else stall_ms) * 1_000_000
        self.fault_at = max(1, self.planned_events // 2) if fault_after is None else fault_after
        if mode not in _MID_STREAM:
            self.fault_at = -1  # nothing fires mid-stream
        if mode is FaultMode.CLOSE_NO_DONE:
            self._done_event = b""  # the end of the stream is the fault

    def step(self, now_ns: int) -> bool:
        if self.state == "active" and now_ns >= self.hold_until_ns:
            if self.steps == self.fault_at:
                self.fault_at = -1
                if self._fire(now_ns) or now_ns < self.hold_until_ns:
                    return self.state != "active"
            self.steps += 1
        return super().step(now_ns)

    def _fire(self, now_ns: int) -> bool:
        """Break the response; return True when the sequence is over."""
        mode = self.mode
        if mode is FaultMode.STALL_MID:
            self.hold_until_ns = now_ns + self.stall_ns
            return False
        if self._renderer is None:
            return self._fire_whole(mode)
        if mode is FaultMode.BAD_SSE:
            self.conn.write(frame(b'{"id":"%b","choices":[]}\n\n' % self.info.response_id.encode()))
            return False
        if mode is FaultMode.BAD_JSON:
            self.conn.write(frame(b'data: {"id":"%b","choices":[{"delta":\n\n' % self._id()))
            return False
        if mode is FaultMode.ERROR_EVENT:
            event = self._renderer.error("simulated failure during generation", 500)
            self.conn.write(frame(event + b"data: [DONE]\n\n") + LAST_CHUNK)
            self.complete()
            return True
        if mode is FaultMode.BAD_FRAMING:
            self.conn.write(b"zz\r\ndata: {}\n\n\r\n")
        self._end_connection(mode)
        return True

    def _id(self) -> bytes:
        return self.info.response_id.encode()

    def _fire_whole(self, mode: FaultMode) -> bool:
        """The non-streamed analogue: a broken body instead of a broken stream."""
        body = self.body()
        if mode in (FaultMode.BAD_JSON, FaultMode.BAD_SSE):
            self.conn.respond(200, list(self.info.headers), body[: len(body) // 2])
        elif mode is FaultMode.ERROR_EVENT:
            error = b'{"error":{"message":"simulated failure","type":"InternalServerError"}}'
            self.conn.respond(200, list(self.info.headers), error)
        elif mode is FaultMode.BAD_FRAMING:
            self.conn.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n")
            self._end_connection(mode)
            return True
        else:  # reset or close mid-body: Content-Length promises more than arrives
            head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
            self.conn.write(head % len(body) + body[: len(body) // 2])
            self._end_connection(mode)
            return True
        self.complete(finish_exchange=False)
        return True

    def _end_connection(self, mode: FaultMode) -> None:
        self.complete(finish_exchange=False)
        if mode is FaultMode.RESET_MID_STREAM:
            self.conn.reset()
        else:
            self.conn.close()


async def drip(write: Callable[[bytes], bool], data: bytes, interval_s: float) -> None:
    """Write ``data`` one byte per ``interval_s``, until done or ``write`` says it is closed."""
    for i in range(len(data)):
        if not write(data[i : i + 1]):
            return
        await asyncio.sleep(interval_s)


def modes_text() -> str:
    return ", ".join(m.value for m in FaultMode)
