"""Ground truth: what the simulator actually wrote, and when, for tests to compare against.

Every timestamp is ``perf_counter_ns()`` of the simulator process: CLOCK_MONOTONIC on Linux, the
same clock a client on the same host reads, so a client's timestamps and these are directly
comparable. Everything kept in memory is bounded (rings); the request log file keeps it all.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO

import orjson

from llmload.sim.jsonvalue import JSON
from llmload.sim.priority import is_realtime

# vLLM's bucket bounds for vllm:time_to_first_token_seconds.
TTFT_BUCKETS_S: tuple[float, ...] = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
    1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip


@dataclass(slots=True)
class RequestEntry:
    """One generation request, filled in as it progresses; logged once when it ends."""

    index: int
    id: str
    client: str
    path: str
    stream: bool
    arrival_ns: int
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens found in the prefix cache at first admission
    first_token_ns: int | None = None
    done_ns: int | None = None
    completion_tokens: int = 0
    events: int = 0
    outcome: str = "ok"
    finish_reason: str | None = None
    client_request_id: str | None = None  # the request's X-Request-Id: joins it to the client's record
    traceparent: str | None = None  # the request's W3C trace context, as it arrived
    reasoning_tokens: int = 0  # of completion_tokens, written as reasoning_content (--reasoning-tokens)
    first_answer_ns: int | None = None  # the write of the first answer (content) token
    images: int = 0  # image_url parts of the prompt (their patches are in prompt_tokens)
    scheduled_ns: int | None = None  # the start of the step that first admitted it to the batch
    last_token_ns: int | None = None  # the write of its last token
    tool_arguments: str | None = None  # a tool call's arguments as written, when the answer is one
    model: str | None = None  # the model the request named (the default one when it named none)
    session: str | None = None  # its session key (``router.session_key``), None without one
    replica: int | None = None  # the replica that served it (``--replicas``); None: never routed

    def as_json(self) -> dict[str, JSON]:
        return {
            "id": self.id,
            "client": self.client,
            "path": self.path,
            "stream": self.stream,
            "arrival_ns": self.arrival_ns,
            "first_token_ns": self.first_token_ns,
            "done_ns": self.done_ns,
            "prompt_tokens": self.prompt_tokens,
            "images": self.images,
            "cached_tokens": self.cached_tokens,
            "completion_tokens": self.completion_tokens,
            "events": self.events,
            "outcome": self.outcome,
            "finish_reason": self.finish_reason,
            "client_request_id": self.client_request_id,
            "traceparent": self.traceparent,
            "reasoning_tokens": self.reasoning_tokens,
            "first_answer_ns": self.first_answer_ns,
            "scheduled_ns": self.scheduled_ns,
            "last_token_ns": self.last_token_ns,
            "tool_arguments": self.tool_arguments,
            "model": self.model,
            "session": self.session,
            "replica": self.replica,
        }


def _percentile(ordered: list[int], q: float) -> int:
    """Nearest-rank percentile of a sorted list (0 when empty)."""
    if not ordered:
        return 0
    rank = max(1, int(q * len(ordered) + 0.999999))
    return ordered[min(rank, len(ordered)) - 1]


def summarize(samples: Iterable[int]) -> dict[str, int]:
    ordered = sorted(samples)
    return {
        "count": len(ordered),
        "p50_ns": _percentile(ordered, 0.50),
        "p99_ns": _percentile(ordered, 0.99),
        "max_ns": ordered[-1] if ordered else 0,
        "mean_ns": sum(ordered) // len(ordered) if ordered else 0,
    }


class Truth:
    """Counters, the tokens-written timeline, step statistics and the request log."""

    def __init__(self, log: IO[bytes] | None = None, ring: int = 200_000) -> None:
        self.tokens_written_total = 0
        self.events_written_total = 0
        self.requests_total = 0
        self.connections_total = 0
        self.prompt_tokens_total = 0
        self.preemptions_total = 0
        self.drafts_total = 0  # events after the first, each one speculative proposal
        self.draft_tokens_total = 0
        self.accepted_tokens_total = 0
        self.busy_ns_total = 0  # time spent in decode steps: the simulated GPU's busy time
        self.profile_start_ns = 0  # the last /start_profile, and its /stop_profile (0: none)
        self.profile_stop_ns = 0
        self.ttft_buckets = [0] * (len(TTFT_BUCKETS_S) + 1)
        self.ttft_sum_ns = 0
        # One entry per decode step (or timer wake): (end, tokens written by then, lateness,
        # duration; 0 under fixed timing, which has no steps of its own).
        self.steps: deque[tuple[int, int, int, int]] = deque(maxlen=ring)
        self.entries: deque[RequestEntry] = deque(maxlen=ring)
        self._log = log

    def begin(
        self,
        *,
        id: str,
        client: str,
        path: str,
        stream: bool,
        arrival_ns: int,
        client_request_id: str | None = None,
        traceparent: str | None = None,
    ) -> RequestEntry:
        """Register a generation request as it arrives; ids follow arrival order."""
        self.requests_total += 1
        return RequestEntry(
            self.requests_total,
            id,
            client,
            path,
            stream,
            arrival_ns,
            client_request_id=client_request_id,
            traceparent=traceparent,
        )

    def finish(self, entry: RequestEntry, outcome: str | None = None) -> None:
        """Close a request's entry (once) and append it to the log."""
        if entry.done_ns is not None:
            return
        entry.done_ns = time.perf_counter_ns()
        if outcome is not None and not entry.outcome.startswith("fault:"):
            entry.outcome = outcome
        self.prompt_tokens_total += entry.prompt_tokens
        self.entries.append(entry)
        if self._log is not None:
            self._log.write(orjson.dumps(entry.as_json(), option=orjson.OPT_APPEND_NEWLINE))
            self._log.flush()

    def first_token(self, entry: RequestEntry, t_ns: int) -> None:
        entry.first_token_ns = t_ns
        seconds = (t_ns - entry.arrival_ns) / 1e9
        self.ttft_sum_ns += t_ns - entry.arrival_ns
        i = 0
        while i < len(TTFT_BUCKETS_S) and seconds > TTFT_BUCKETS_S[i]:
            i += 1
        self.ttft_buckets[i] += 1

    def step_done(self, lateness_ns: int, written_at_ns: int, duration_ns: int = 0) -> None:
        """A decode step (or timer wake) ended: how late, how long, and its timeline point."""
        self.steps.append((written_at_ns, self.tokens_written_total, lateness_ns, duration_ns))
        self.busy_ns_total += duration_ns

    def timeline(self, since_ns: int = 0) -> list[tuple[int, int]]:
        return [(t, tokens) for t, tokens, _, _ in self.steps if t >= since_ns]

    def requests(self) -> list[dict[str, JSON]]:
        return [e.as_json() for e in sorted(self.entries, key=lambda e: e.index)]

    def counters(self, running: int, waiting: int) -> dict[str, int]:
        return {
            "now_ns": time.perf_counter_ns(),
            "tokens_written_total": self.tokens_written_total,
            "events_written_total": self.events_written_total,
            "requests_total": self.requests_total,
            "connections_total": self.connections_total,
            "preemptions_total": self.preemptions_total,
            "busy_ns_total": self.busy_ns_total,
            "profile_start_ns": self.profile_start_ns,
            "profile_stop_ns": self.profile_stop_ns,
            "running": running,
            "waiting": waiting,
            "cpu_ns": time.process_time_ns(),
        }

    def stats(self, since_ns: int = 0) -> dict[str, JSON]:
        """Step lateness and durations over the steps that ended at or after ``since_ns``."""
        window = [step for step in self.steps if step[0] >= since_ns]
        return {
            "since_ns": since_ns,
            "lateness": summarize([step[2] for step in window]),
            "step_duration": summarize([step[3] for step in window if step[3]]),
            "cpu_ns": time.process_time_ns(),
            "realtime": is_realtime(),
        }
