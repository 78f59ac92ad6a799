"""llmload's worker without Locust's runner loop: the objects one ``ChatUser`` uses, wired the same way.

Each stream is a greenlet running the body of ``ChatUser.generate``, ``send_request`` itself: a
prompt from the session, ``ApiClient.run`` over a ``LeanTransport``, ``ProcessRun.on_record``
(counted at once; the ``requests.jsonl`` line, ``StageStats`` with every latency histogram and
``TimeSeries`` folded by the session's folder greenlet when the loop is idle), and the one Locust
request event per request into a real ``locust.env.Environment``'s stats (a local runner is
created for its listener, never started); between requests the greenlet yields as Locust's
``User.wait()`` does. The health monitor and the in-flight sampler run as in a worker. So CPU
measured here is what a worker spends, minus only Locust's runner and ZeroMQ heartbeats (one
message per second, not per event).

Import this only in a process that gevent has already monkey-patched (``client_main`` does).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gevent

try:
    from llmload.run.process_run import ProcessRun
except ImportError:  # an older revision (bench A/B): the per-process state was a Session
    try:
        from llmload.run.session import Session as ProcessRun  # type: ignore[no-redef]
    except ImportError:
        from llmload.locust.session import Session as ProcessRun  # type: ignore[no-redef]
try:  # src/ since the layers became folders
    from llmload.config.settings import PhaseConfig, RequestConfig, RunConfig, WorkloadConfig
    from llmload.core.phases import Phase
    from llmload.core.record import RequestRecord
    from llmload.core.stages import Announcement

    try:
        from llmload.core.timeouts import Timeouts
    except ImportError:  # before the limits left the recorder
        from llmload.core.recorder import Timeouts  # type: ignore[attr-defined,no-redef]
except ImportError:  # older src/ (hot_path_ab.py measures older revisions)
    from llmload.config import PhaseConfig, RequestConfig, RunConfig, WorkloadConfig  # type: ignore
    from llmload.record import RequestRecord  # type: ignore
    from llmload.recorder import Timeouts  # type: ignore
    from llmload.stages import Announcement  # type: ignore

    try:
        from llmload.phases import Phase  # type: ignore
    except ImportError:  # older still: the stage's phases had an enum of their own
        from llmload.stages import StagePhase as Phase  # type: ignore
from llmload.transport.base import HttpRequest, ResponseSink, Transport
from llmload.transport.factory import TransportConfig

try:
    from llmload.run.request import send_request
except ImportError:  # older src/ (hot_path_ab.py measures older revisions)
    try:
        from llmload.locust.request import send_request  # type: ignore[no-redef]
    except ImportError:
        from llmload.locust.user import send_request  # type: ignore[attr-defined,no-redef]

try:  # requests as ``Call``s, one client per session (src/ since the scenario API)
    try:
        from llmload.run.client import Call as _Call
    except ImportError:  # before the layers became folders
        from llmload.client import Call as _Call  # type: ignore  # noqa: F401

    CALLS = True
except ImportError:
    CALLS = False

MODEL = "sim-llama-3-8b"


def _chat_client(session: ProcessRun) -> Any:
    return session.client() if CALLS else session.client("chat")  # type: ignore[call-arg]


def _request(session: ProcessRun, prompt: Any) -> Any:
    """What a revision's client sends for a prompt: a ``Call``, or the prompt itself before."""
    return _chat_client(session).call(prompt, "chat") if CALLS else prompt


class _TeeSink:
    """Forwards everything to the recorder and keeps the raw body bytes of each read, so the
    benchmark can read the simulator's ``sent_ns`` stamps afterwards. The bytes are kept, not
    parsed: per read that is one list append, so the client measured stays the client."""

    __slots__ = ("_inner", "pieces")

    def __init__(self, inner: ResponseSink, pieces: list[bytes]) -> None:
        self._inner = inner
        self.pieces = pieces

    def on_connect(self, start_ns: int, connected_ns: int, tls_start_ns: int | None = None) -> None:
        self._inner.on_connect(start_ns, connected_ns)

    def on_sent(self, sent_ns: int) -> None:
        self._inner.on_sent(sent_ns)

    # The HTTP phases' stamps (2026-12): a revision from before them has no such methods, and a
    # benchmark of that revision measures what it did.
    def on_written(self, t_ns: int) -> None:
        if (written := getattr(self._inner, "on_written", None)) is not None:
            written(t_ns)

    def on_first_byte(self, t_ns: int) -> None:
        if (first := getattr(self._inner, "on_first_byte", None)) is not None:
            first(t_ns)

    def on_headers(self, t_ns: int, status: int, headers: dict[str, str]) -> None:
        self._inner.on_headers(t_ns, status, headers)

    def on_data(self, t_ns: int, data: bytes) -> bool:
        self.pieces.append(data)
        return self._inner.on_data(t_ns, data)

    def on_end(self, t_ns: int) -> None:
        self._inner.on_end(t_ns)

    def read_deadline_ns(self) -> int | None:
        return self._inner.read_deadline_ns()


class TeeTransport:
    """A transport that hands each request's sink to a ``_TeeSink``; ``last`` is the body kept."""

    def __init__(self, inner: Transport) -> None:
        self._inner = inner
        self.last: list[bytes] = []

    def exchange(self, request: HttpRequest, sink: ResponseSink) -> None:
        self.last = []
        self._inner.exchange(request, _TeeSink(sink, self.last))

    def close(self) -> None:
        self._inner.close()


def make_session(
    url: str, streams: int, max_tokens: int, results_dir: Path, *, start: bool = True
) -> ProcessRun:
    """A session in its measured window, as a worker's is after the master's announcements."""
    config = RunConfig(
        host=url,
        request=RequestConfig(model=MODEL, ignore_eos=True),
        workload=WorkloadConfig(prompt_tokens=128, max_tokens=max_tokens),
        phases=PhaseConfig(),
        timeouts=Timeouts(),
        transport=TransportConfig(url),
        results_dir=str(results_dir),
    )
    session = ProcessRun(config)
    if start:
        session.start()
    for phase in (Phase.WARMUP, Phase.MEASURE):
        session.apply(Announcement(0, phase, time.time(), streams))
    return session


class Worker:
    """``streams`` closed-loop users on one session; ``keep`` gets every finished record."""

    def __init__(
        self,
        session: ProcessRun,
        streams: int,
        *,
        tee: bool = False,
        record: bool = True,
        keep: Callable[[RequestRecord, list[bytes]], None] | None = None,
    ) -> None:
        """``record=False`` (a diagnostic) skips what a request's end costs the loop: the
        session's ``on_record`` (JSON line, stats, series, exporter state) and the Locust event."""
        from locust.env import Environment

        self.session = session
        self.environment = Environment(user_classes=[])
        self.environment.create_local_runner()  # its listener logs each request into Locust's stats
        self._streams = streams
        self._tee = tee
        self._keep = keep
        self._record = record
        self._stop = False
        self.finished_events = 0
        self.finished_reads = 0
        self._greenlets: list[gevent.Greenlet[Any, None]] = []

    def start(self, stagger_s: float = 0.0) -> None:
        # The loop's clock is stale after building the session (hundreds of ms of imports and
        # set-up without a loop iteration): timers armed now would count from that stale time,
        # and the first streams' staggered starts would all fire at once.
        gevent.get_hub().loop.update_now()
        for i in range(self._streams):
            self._greenlets.append(gevent.spawn_later(stagger_s * i / self._streams, self._user, i))

    def events_so_far(self) -> int:
        """Events parsed so far, in-flight requests included."""
        return self.finished_events + sum(r.events for r in list(self.session.active))

    def reads_so_far(self) -> int:
        return self.finished_reads + sum(r.reads for r in list(self.session.active))

    def stop(self, timeout_s: float = 30.0) -> None:
        """Let every user finish its request in flight, then end (no request is cut short)."""
        self._stop = True
        gevent.joinall(self._greenlets, timeout=timeout_s)
        gevent.killall(self._greenlets)

    def _user(self, index: int) -> None:
        session = self.session
        user_id = session.new_user_id()
        inner = session.transports.new()
        transport = TeeTransport(inner) if self._tee else inner
        count = 0
        while not self._stop:
            prompt = session.prompts.get(user_id, count)
            if self._record:  # exactly what a ChatUser's task does
                if CALLS:
                    record = send_request(
                        self.environment.events.request.fire,
                        session,
                        transport,
                        _request(session, prompt),
                        user_id=user_id,
                        index=count,
                    )
                else:
                    record = send_request(  # type: ignore[call-arg]
                        self.environment, session, "chat", transport, prompt, user_id=user_id, index=count
                    )
            else:
                stage, window = session.current()
                session.request_started(stage, window)
                record = _chat_client(session).run(
                    transport,
                    _request(session, prompt),
                    request_id=f"{session.process_tag}-{user_id}-{count}",
                    user=str(user_id),
                    stage=stage,
                    window=window,
                    **_in_flight(session),
                )
                session.in_flight -= 1
            count += 1
            gevent.sleep(0)  # Locust's User.wait() between tasks, with wait_time constant(0)
            self.finished_events += record.events
            self.finished_reads += record.reads
            if self._keep is not None:
                self._keep(record, transport.last if isinstance(transport, TeeTransport) else [])
        transport.close()


class _Active:
    """The live count's part of a request's bookkeeping, and no more (no fold, no Locust)."""

    def __init__(self, active: set[RequestRecord]) -> None:
        self._active = active

    def began(self, record: RequestRecord) -> None:
        self._active.add(record)

    def ended(self, record: RequestRecord) -> None:
        self._active.discard(record)


def _in_flight(session: ProcessRun) -> dict[str, Any]:
    """The in-flight set, as the revision under test takes it: a ``flight`` (one sink for a
    request's start and end) since the frame's third step, an ``active`` set before."""
    import inspect

    if "flight" in inspect.signature(_chat_client(session).run).parameters:
        return {"flight": _Active(session.active)}
    return {"active": session.active}
