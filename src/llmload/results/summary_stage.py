"""``summary.json``'s stage: what one stage (a level, a repeat) measured, and its parts.

A stage's numbers are the window's requests folded (``results/from_stats.py`` builds them);
``results/summary.py`` holds the run around them and the one codec both use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from llmload.core.health import HealthSnapshot
from llmload.protocol.jsonvalue import JSON


@dataclass(frozen=True, slots=True, kw_only=True)
class Latency:
    """One latency metric of a stage, in milliseconds."""

    count: int
    mean: float
    min: float
    p50: float
    p90: float
    p95: float
    p99: float
    p999: float
    max: float

    def quantile(self, name: str) -> float:
        """``"p50"`` ... ``"p999"``, ``"mean"``, ``"max"`` by name (tables pick columns by name)."""
        value: float = getattr(self, name)
        return value


@dataclass(frozen=True, slots=True, kw_only=True)
class MeanMax:
    mean: float
    max: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Requests:
    """The measured window's requests by outcome, and those the warm-up and drain excluded."""

    ok: int
    failed: int
    unfinished: int
    warmup: int
    drain: int
    cancelled: int = 0  # closed by the client on purpose (--cancel): neither ok nor failed

    @property
    def total(self) -> int:
        return self.ok + self.failed + self.unfinished + self.cancelled


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempts:
    """Every request of the stage, warm-up and drain included: the verdict's evidence."""

    finished: int
    failed: int
    unfinished: int
    errors: Mapping[str, int] = field(default_factory=dict)
    cancelled: int = 0  # of finished: closed by the client on purpose (--cancel)


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorExample:
    """One answer the server gave for a kind of failure (redacted)."""

    status: int | None
    message: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class SloOutcome:
    rule: str
    observed: float | None
    met: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerTimingsSummary:
    """The server's own per-request timings (llama.cpp's ``timings``) over the stage's window,
    and per request what the client saw minus what the server did (ms, signed)."""

    requests: int  # requests of the window whose answer carried timings
    cached_prompt_tokens: int  # their timings' cache_n
    prefill_ms: Latency | None  # the server's prompt evaluation (prompt_ms)
    decode_per_token_ms: Latency | None  # the server's predicted_ms / predicted_n
    ttft_minus_prefill_ms: Latency | None  # client TTFT - prompt_ms: network, queueing, client
    decode_minus_predicted_ms: Latency | None  # client first-to-last token - predicted_ms
    tpot_minus_server_ms: Latency | None  # client TPOT - predicted_ms / (predicted_n - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerMetricsSummary:
    """vLLM's own per-request timing (``metrics``) over the stage's window, joined per request
    to the client's record (ms; the differences signed)."""

    requests: int  # requests of the window whose answer carried metrics
    engine_ttft_ms: Latency | None  # time_to_first_token_ms: first scheduled to first token
    queue_ms: Latency | None  # queue_time_ms: waiting for a place in the batch
    queue_share_of_ttft: float | None  # the queue's share of the client's TTFT, over the window
    ttft_outside_engine_ms: Latency | None  # client TTFT - queue - engine TTFT: HTTP, network, client
    mean_itl_ms: Latency | None  # the engine's mean inter-token latency
    tpot_minus_mean_itl_ms: Latency | None  # client TPOT - the engine's mean ITL
    decode_minus_generation_ms: Latency | None  # client first-to-last token - generation_time_ms


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpPhasesSummary:
    """Where the stage's successful requests spent their time before the first token, phase
    by phase (``metrics/http_phases.py``); a phase the transport did not see is None."""

    requests: int
    new_connections: int  # of them, requests that opened a connection of their own
    pool_wait_ms: Latency | None  # handed to the transport until it had a connection
    tcp_connect_ms: Latency | None  # a new connection's TCP connect
    tls_ms: Latency | None  # its TLS handshake
    request_write_ms: Latency | None  # the request's bytes handed to the socket
    first_byte_ms: Latency | None  # written until the first response byte
    first_token_ms: Latency | None  # the first response byte until the first token


@dataclass(frozen=True, slots=True, kw_only=True)
class StageCost:
    """What the stage's tokens cost at the deployment's price per hour (``--gpu-hour-cost``).

    Each figure charges the whole deployment's hour to one kind of token, as a price sheet
    does: they are not shares of one bill, and do not add up."""

    usd_per_hour: float
    usd_per_m_output_tokens: float | None
    usd_per_m_input_tokens: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuStage:
    """The GPUs over the stage's window, from a DCGM exporter (``--gpu-metrics``); fields are
    None where the exporter had no such metric."""

    gpus: int  # GPUs the exporter reported
    util_pct: MeanMax | None  # mean over GPUs of DCGM_FI_DEV_GPU_UTIL
    memory_used_mib: MeanMax | None  # sum over GPUs of DCGM_FI_DEV_FB_USED
    power_w: MeanMax | None  # sum over GPUs of DCGM_FI_DEV_POWER_USAGE
    energy_j: float | None  # the energy counter's increase, else mean power x the window
    joules_per_output_token: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningSummary:
    """A reasoning model's thinking and answer over the stage's window (ok requests)."""

    requests: int  # requests that reasoned
    reasoning_tokens: int  # their thinking tokens
    answer_tokens: int  # output tokens of the window's ok requests that were not thinking
    reasoning_share: float | None  # reasoning_tokens / output tokens
    reasoning_tokens_per_request: MeanMax | None  # of the requests that reasoned
    answer_tokens_per_request: MeanMax | None
    think_ms: Latency | None  # TTFOT - TTFT per request: the thinking phase
    tpot_reasoning_ms: Latency | None  # (first_output - first_token) / reasoning tokens
    tpot_answer_ms: Latency | None  # (last_token - first_output) / (answer tokens - 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplaySummary:
    """How far the completed sessions of an --agent-trace replay strayed from the recording:
    their turns, summed (workload/agent_replay.py says the rule)."""

    sessions: int  # completed recorded sessions counted here
    turns_live: int  # a live session's reply joined the history as the server wrote it
    turns_spliced: int  # it was replaced by the assistant turn the recording answers
    turns_recorded: int  # a recorded-history session's turn, sent as recorded
    turns_cut: int  # the reply stopped at max_tokens (finish_reason "length")
    sessions_spliced: int  # sessions with at least one spliced turn


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionsSummary:
    """Agentic sessions that started inside the stage's window, by how they ended, and the
    prefix cache's share of the prompt per turn index (conversations' turns too)."""

    completed: int
    failed: int  # a turn failed, so the session's later turns never went out
    unfinished: int  # the run ended inside the session
    completed_per_s: float | None  # completed sessions per second of the window
    duration_ms: Latency | None  # of completed sessions, first request to last reply
    worst_ttft_ms: Latency | None  # per completed session, the TTFT of its slowest own turn
    turns_per_session: MeanMax | None
    requests_per_session: MeanMax | None  # sub-agents' requests included
    output_tokens_per_session: MeanMax | None
    cache_hit_rate: MeanMax | None  # per completed session: cached / prompt tokens, as reported
    cache_hit_rate_by_turn: Mapping[str, float]  # turn index -> cached / prompt tokens, as reported
    replay: ReplaySummary | None = None  # None: no recorded session completed (--agent-trace)


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedStage:
    """A stage's requests of one name (a scenario's ``name=``): counted and timed as the
    stage's are, over the same measured window."""

    requests: Requests
    errors: Mapping[str, int]
    output_tokens: int
    output_tok_per_s: float | None
    input_tok_per_s: float | None
    request_per_s: float | None
    ttft_ms: Latency | None
    ttfot_ms: Latency | None
    itl_ms: Latency | None
    tpot_ms: Latency | None
    e2e_ms: Latency | None
    # requests of the window that met every request-level SLO (the tenant's own, or --slo),
    # per second; with no SLO, every ok request counts
    goodput_req_per_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TenantShare:
    """One tenant of a --tenants mix over the stage's window."""

    weight_share: float  # its weight over the sum of weights
    ok: int
    goodput_req_per_s: float | None  # its requests that met its SLO (every ok one without)
    goodput_share: float | None  # of the tenants' goodput together
    share_over_weight: float | None  # goodput_share / weight_share: 1.0 is its fair share
    ttft_p99_ms: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TenantsSummary:
    """Fairness between the tenants of a --tenants mix."""

    tenants: Mapping[str, TenantShare]
    # Jain's index over the tenants' share_over_weight: 1.0 when each got its weight's share of
    # the goodput, 1/n when one tenant got all of it
    jain_index: float | None
    worst_ttft_p99_tenant: str | None
    best_ttft_p99_tenant: str | None
    ttft_p99_worst_over_best: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    index: int
    concurrency: int | None
    rate_req_per_s: float | None  # open-loop stages: the offered request rate
    duration_s: float
    # perf_counter_ns of the measuring process: comparable with a simulator on the same host
    window_ns: tuple[int | None, int | None] | None
    requests: Requests
    errors: Mapping[str, int]
    error_rate: float | None
    attempts: Attempts
    error_samples: Mapping[str, ErrorExample]
    partial: bool
    finish_reasons: Mapping[str, int]
    output_tokens: int
    window_output_tokens: int
    output_tok_per_s: float | None
    input_tok_per_s: float | None
    total_tok_per_s: float | None
    request_per_s: float | None
    goodput_req_per_s: float | None  # requests that met every request-level SLO, per second
    prompt_tokens_requested_mean: float | None
    cached_prompt_tokens: int | None  # None: the server's usage reports no cache
    prompt_cache_hit_rate: float | None
    token_source: str | None
    client_bound: bool
    client_health: Mapping[str, HealthSnapshot]  # per process
    tokens_per_event: MeanMax | None
    events_per_read: MeanMax | None
    output_tokens_per_request: MeanMax | None
    prompt_tokens_per_request: MeanMax | None
    warnings: tuple[str, ...]
    ttft_ms: Latency | None
    ttfot_ms: Latency | None
    itl_ms: Latency | None
    tpot_ms: Latency | None
    e2e_ms: Latency | None
    e2e_scheduled_ms: Latency | None
    chunk_gap_ms: Latency | None
    connect_ms: Latency | None
    queue_ms: Latency | None
    ttft_ms_by_label: Mapping[str, Latency | None]
    client_bound_by: tuple[str, ...] = ()
    slo: tuple[SloOutcome, ...] | None = None  # None: no --slo
    announcement_lateness_s: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    server: Mapping[str, JSON] | None = None  # the server's /metrics over the window, if scraped
    by_name: Mapping[str, NamedStage] = field(default_factory=dict)  # named requests only
    server_timings: ServerTimingsSummary | None = None  # None: the server gave no timings
    server_metrics: ServerMetricsSummary | None = None  # None: the server sent no metrics
    http_phases: HttpPhasesSummary | None = None  # None: no request of the window succeeded
    cost: StageCost | None = None  # None: no --gpu-hour-cost or --deployment-hour-cost
    gpu: GpuStage | None = None  # None: no --gpu-metrics, or it answered nothing
    reasoning: ReasoningSummary | None = None  # None: no request reasoned
    sessions: SessionsSummary | None = None  # None: no agentic session, no turn with a cache count
    tenants: TenantsSummary | None = None  # None: no --tenants
    # the server's count of the prompts over the length llmload built them to (1.0: exact)
    prompt_tokens_counted_vs_requested: float | None = None
    # output tokens over the max_tokens asked, of requests that asked (1.0: every one ran to it)
    output_tokens_vs_max_tokens: float | None = None
    images_per_request: MeanMax | None = None  # of the requests that sent images (--images)
    image_bytes_per_request: MeanMax | None = None  # their encoded files' bytes

    def latency(self, metric: str) -> Latency | None:
        """``"ttft"``, ``"itl"``, ... by name."""
        value: Latency | None = getattr(self, f"{metric}_ms")
        return value

    @property
    def name(self) -> str:
        return f"stage {self.index}" + ("" if self.concurrency is None else f" (C={self.concurrency})")
