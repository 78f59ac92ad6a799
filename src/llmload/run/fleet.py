"""The master's view of the fleet: merged stage stats, progress, finals and lost workers.

Workers ship deltas of their mergeable stats every few seconds and a final one when their users
have stopped (``shipping.py``). The master merges them as they come, so what it reports equals
the fleet's records to one histogram bucket, and it knows, for every worker, what it has heard
last: a worker that disappears is named, with an upper bound of what it may have taken along.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from llmload.core.health import HealthSnapshot
from llmload.core.phases import Phase
from llmload.core.stages import Announcement, Progress
from llmload.core.stop import Stopped, with_process
from llmload.metrics import wire
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.timeseries import TimeSeries
from llmload.protocol.jsonvalue import JSON, JSONObject
from llmload.results.build import StageView
from llmload.results.summary import LostWorker
from llmload.run.delta import Delta


@dataclass(slots=True)
class WorkerView:
    client_id: str
    name: str
    joined_wall: float
    last_seq: int = -1
    last_heard_wall: float = 0.0
    final: bool = False
    lost: bool = False
    users: int = 0
    tokens_received: int = 0
    in_flight: int = 0
    health_now: dict[str, float | None] = field(default_factory=dict)
    records: int = 0
    records_file: str | None = None
    completed: dict[int, int] = field(default_factory=dict)
    in_flight_measured: dict[int, int] = field(default_factory=dict)
    sent_measured: dict[int, int] = field(default_factory=dict)
    health: dict[int, HealthSnapshot] = field(default_factory=dict)
    lateness: dict[int, Mapping[str, float]] = field(default_factory=dict)
    min_e2e_s: float | None = None


@dataclass(slots=True)
class StageMeta:
    concurrency: int
    rate: float | None = None
    walls: dict[str, float] = field(default_factory=dict)  # phase -> master wall time


class Fleet:
    def __init__(self) -> None:
        self.workers: dict[str, WorkerView] = {}
        self.stats: dict[int, StageStats] = {}
        self.stages: dict[int, StageMeta] = {}
        self.current_stage = -1
        self.history: list[Announcement] = []  # of the current stage, for late joiners
        self.model: str | None = None
        self.timeseries = TimeSeries()
        self.classic: dict[int, ClassicStats] = {}
        self.announcements: list[tuple[float, int, str]] = []
        self.stopped: Stopped | None = None  # why the run ends early (verdict.py)
        self.exit_code: int | None = None  # the verdict, once the run has ended
        self.warnings: list[str] = []  # what the workers' starts found doubtful, once each

    # -- announcements --------------------------------------------------------------------------

    def record(self, a: Announcement) -> None:
        self.announcements.append((a.wall_time, a.stage, a.phase.value))
        if a.phase is Phase.DONE:
            return
        meta = self.stages.setdefault(a.stage, StageMeta(a.concurrency, a.rate))
        meta.walls[a.phase.value] = a.wall_time
        if a.stage != self.current_stage:
            self.current_stage = a.stage
            self.history = []
        self.history.append(a)

    # -- worker messages ------------------------------------------------------------------------

    def join(self, client_id: str, name: str | None = None) -> WorkerView:
        if client_id not in self.workers:
            self.workers[client_id] = WorkerView(client_id, name or client_id, time.time())
        return self.workers[client_id]

    def on_delta(self, client_id: str, data: JSONObject) -> None:
        """Merge one worker's message (its wire form, ``delta.py``) unless already merged."""
        d = wire.decode(Delta, data)
        w = self.join(client_id, d.name)
        if d.seq <= w.last_seq:
            return  # a duplicate: never merge twice
        w.last_seq, w.last_heard_wall, w.name = d.seq, time.time(), d.name
        for stage, stats in d.stages.items():
            self.stats.setdefault(stage, StageStats()).merge(stats)
            e2e_min = stats.hist["e2e"].min
            if e2e_min is not None:
                seconds = e2e_min / 1e9
                w.min_e2e_s = seconds if w.min_e2e_s is None else min(w.min_e2e_s, seconds)
        for stage, classic in d.classic.items():
            self.classic.setdefault(stage, ClassicStats()).merge(classic)
        if d.timeseries is not None:
            self.timeseries.merge(d.timeseries)
        w.in_flight, w.health_now = d.in_flight, dict(d.health_now)
        w.completed, w.in_flight_measured = dict(d.completed), dict(d.in_flight_measured)
        w.sent_measured = dict(d.sent_measured)
        w.health.update(d.health)
        w.lateness.update(d.lateness)
        w.users, w.records, w.records_file = d.users, d.records, d.records_file
        w.tokens_received = d.tokens_received
        self.model = self.model or d.model
        self.warnings += [x for x in dict.fromkeys(d.warnings) if x not in self.warnings]
        if d.stopped is not None and self.stopped is None:
            self.stopped = with_process(d.stopped, w.name)
        w.final = w.final or d.final

    def progress(self) -> Progress:
        stage = max(self.current_stage, 0)
        live = [w for w in self.workers.values() if not w.lost]
        return Progress(
            sum(w.completed.get(stage, 0) for w in live),
            sum(w.in_flight_measured.get(stage, 0) for w in live),
            # a lost worker's requests were sent: the count asked for does not wait for more
            sum(w.sent_measured.get(stage, 0) for w in self.workers.values()),
        )

    def tokens_received(self) -> int:
        return sum(w.tokens_received for w in self.workers.values())

    def mark_lost(self, client_ids: Iterable[str]) -> None:
        for cid in client_ids:
            if cid in self.workers and not self.workers[cid].final:
                self.workers[cid].lost = True

    def waiting_for(self) -> list[str]:
        return [w.name for w in self.workers.values() if not w.final and not w.lost]

    # -- results --------------------------------------------------------------------------------

    def lost_report(self, now: float, max_tokens: int | None) -> list[LostWorker]:
        """For each lost worker: what it may have taken along since its last delta.

        Each of its users had at most one request in flight and could complete at most one
        request per shortest end-to-end latency it ever reported, so the bound is
        ``users * (1 + silence / min_e2e)`` requests (and that times max_tokens tokens).
        """
        out = []
        for w in self.workers.values():
            if not w.lost:
                continue
            silence = max(0.0, now - (w.last_heard_wall or w.joined_wall))
            per_user = 1 + (silence / w.min_e2e_s if w.min_e2e_s else silence)
            bound = int(w.users * per_user + 0.999999)
            out.append(
                LostWorker(
                    worker=w.name,
                    client_id=w.client_id,
                    silent_s=round(silence, 3),
                    last_seq=w.last_seq,
                    requests_missing_at_most=bound,
                    output_tokens_missing_at_most=None if max_tokens is None else bound * max_tokens,
                )
            )
        return out

    def views(self, *, live: bool = False) -> list[StageView]:
        """Every stage so far; ``live``: a window still open counts until the moment every
        live worker's merged numbers reach (its last delta), not until now: the deltas come
        once a second, and a window counted to now would hold up to a second too few tokens."""
        views = []
        heard = [w.last_heard_wall for w in self.workers.values() if not w.lost and not w.final]
        as_of = min(heard) if heard and all(heard) else time.time()
        for index, meta in sorted(self.stages.items()):
            t0, t1 = meta.walls.get("measure"), meta.walls.get("drain")
            if live and t0 is not None and t1 is None:
                t1 = max(t0, as_of)
            window_s = (t1 - t0) if t0 is not None and t1 is not None else 0.0
            views.append(
                StageView(
                    index=index,
                    concurrency=meta.concurrency,
                    stats=self.stats.get(index, StageStats()),
                    window_s=window_s,
                    measured=t0 is not None,
                    health={w.name: w.health[index] for w in self.workers.values() if index in w.health},
                    lateness_s={
                        w.name: w.lateness[index] for w in self.workers.values() if index in w.lateness
                    },
                    rate=meta.rate,
                )
            )
        return views

    def record_files(self) -> list[dict[str, JSON]]:
        return [
            {"process": w.name, "records": w.records, "records_file": w.records_file, "lost": w.lost}
            for w in self.workers.values()
        ]
