"""Typed, frozen settings for one run, validated once at the edge that builds them.

Only ``llmload.config.args`` reads Locust's parsed options; everything else receives a
``RunConfig``. Secrets (the API key) never appear in ``public_dict``, so they cannot reach
``summary.json``, logs or reports.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from importlib.util import find_spec
from typing import Literal

from llmload.config.asked import RequestConfig, WorkloadConfig
from llmload.core.redact import redact_text, redact_url
from llmload.core.timeouts import Timeouts
from llmload.errors import ConfigError
from llmload.metrics.slo import SloRule
from llmload.protocol.jsonvalue import JSON
from llmload.protocol.origin import parse_origin
from llmload.workload.arrivals import ArrivalKind, Arrivals
from llmload.workload.ramps import Ramp
from llmload.workload.replay import ReplaySpec
from llmload.workload.traces import FORMATS, FormatChoice


@dataclass(frozen=True, slots=True)
class PhaseConfig:
    """Warm-up is excluded from every number; the drain lets in-window requests finish."""

    warmup_requests: int | None = None  # None: as many as the concurrency
    warmup_s: float = 0.0
    drain_s: float = 120.0
    window_requests: int | None = None  # --requests: None, the window is only timed

    def __post_init__(self) -> None:
        if self.window_requests is not None and self.window_requests < 1:
            raise ConfigError("--requests", self.window_requests, "must be 1 or more")
        if self.warmup_requests is not None and self.warmup_requests < 0:
            raise ConfigError("--warmup-requests", self.warmup_requests, "must be 0 or more")
        if self.warmup_s < 0:
            raise ConfigError("--warmup-s", self.warmup_s, "must be 0 or more")
        if self.drain_s < 0:
            raise ConfigError("--drain-s", self.drain_s, "must be 0 or more")


@dataclass(frozen=True, slots=True)
class OpenLoopConfig:
    """Open-loop arrivals (``OpenLoopUser``): a request rate instead of a user count."""

    rate: float | None = None  # requests per second over the whole fleet
    arrival: ArrivalKind = "poisson"
    burstiness: float = 1.0
    max_in_flight: int = 1024  # arrivals beyond it wait in the client (queue time grows)

    def __post_init__(self) -> None:
        # the schedule's own checks, at once rather than when the first open-loop user starts
        Arrivals(
            1.0 if self.rate is None else self.rate,
            self.arrival,
            self.burstiness,
        )
        if self.max_in_flight < 1:
            raise ConfigError("--max-in-flight", self.max_in_flight, "must be >= 1")


@dataclass(frozen=True, slots=True)
class TraceConfig:
    """Trace replay (the ``trace`` scenario): which file, read how, replayed how."""

    path: str | None = None  # None: no trace
    format: FormatChoice = "auto"
    replay: ReplaySpec = field(default_factory=ReplaySpec)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ConfigError("--trace-format", self.format, f"must be one of {', '.join(FORMATS)}")


@dataclass(frozen=True, slots=True)
class SweepConfig:
    """Used when the locustfile has a SweepShape: one stage per level (times ``repeat``)."""

    levels: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
    window_s: float = 30.0
    repeat: int = 1
    rates: tuple[float, ...] = ()  # open-loop request-rate levels instead of concurrency levels
    ramp: Ramp | None = None  # instead of levels and rates: steps without warm-up
    until_saturated: bool = False  # end after the level that shows saturation

    def __post_init__(self) -> None:
        if self.ramp is not None and self.rates:
            raise ConfigError("--ramp", self.ramp.text, "a ramp replaces --rates: give one or the other")
        if self.ramp is not None and self.repeat != 1:
            raise ConfigError("--repeat", self.repeat, "a ramp's steps are not repeated: drop --repeat")

    @property
    def max_users(self) -> int:
        """The most users a stage runs: the top level, or the ramp's top step."""
        if self.ramp is not None and self.ramp.kind == "users":
            return max(self.ramp.users())
        return max(self.levels)


@dataclass(frozen=True, slots=True)
class ExporterConfig:
    """The live Prometheus endpoint of the master (or the only process); port 0 turns it off."""

    port: int = 0
    host: str = "127.0.0.1"
    linger_s: float = 0.0  # keep serving after the run so the last scrape sees the final numbers
    pushgateway_url: str | None = None
    pushgateway_delete: bool = False
    # An OTLP/HTTP collector (Jaeger, Tempo, an OpenTelemetry Collector): a client span per request
    otlp_endpoint: str | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError("--prometheus-port", self.port, "must be a TCP port (0: off)")
        if self.linger_s < 0:
            raise ConfigError("--prometheus-linger-s", self.linger_s, "must be 0 or more")
        if self.otlp_endpoint is not None:
            if not self.otlp_endpoint.startswith(("http://", "https://")):
                raise ConfigError(
                    "--otlp-endpoint",
                    self.otlp_endpoint,
                    "must be an http(s) URL, e.g. http://127.0.0.1:4318",
                )
            if not _installed("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"):
                raise ConfigError(
                    "--otlp-endpoint", self.otlp_endpoint, "needs the otlp extra: pip install 'llmload[otlp]'"
                )


def _installed(*modules: str) -> bool:
    """Whether every module can be imported; ``find_spec`` of a submodule imports its parent,
    which raises when the parent is not installed at all."""
    try:
        return all(find_spec(name) is not None for name in modules)
    except ModuleNotFoundError:
        return False


@dataclass(frozen=True, slots=True)
class ServerControlConfig:
    """What the run asks of the server besides answers (``target/control.py``)."""

    reset_prefix_cache: bool = False  # once, before the first request
    profile_stages: tuple[int, ...] = ()  # the server's profiler runs over these stages' windows


@dataclass(frozen=True, slots=True)
class FleetConfig:
    """Distributed runs: how often workers report, how long the master waits for finals."""

    report_interval_s: float = 1.0
    final_wait_s: float = 30.0

    def __post_init__(self) -> None:
        if not 0 < self.report_interval_s <= 3:
            raise ConfigError("--report-interval-s", self.report_interval_s, "must be in (0, 3]")
        if self.final_wait_s < 0:
            raise ConfigError("--final-wait-s", self.final_wait_s, "must be 0 or more")


@dataclass(frozen=True, slots=True)
class HistoryConfig:
    """Where the run records itself when it ends (docs/history.md): the results store and the
    labels it is recorded with."""

    enabled: bool = True  # --no-history wins over a path, which may come from LLMLOAD_HISTORY
    path: str | None = None  # None: history.sqlite under the user's data directory
    labels: tuple[tuple[str, str], ...] = ()  # --label KEY=VALUE, in the order given


@dataclass(frozen=True, slots=True)
class ChecksConfig:
    """What makes a finished run fail (exit codes in llmload.results.exitcodes)."""

    slo: tuple[SloRule, ...] = ()
    max_error_rate: float | None = None
    fail_on_client_bound: bool = False


@dataclass(frozen=True, slots=True)
class CostConfig:
    """What the deployment under test costs per hour: per GPU (times ``gpus``) or as a whole."""

    gpu_hour_usd: float | None = None
    gpus: int = 1
    deployment_hour_usd: float | None = None

    def __post_init__(self) -> None:
        for flag, value in (
            ("--gpu-hour-cost", self.gpu_hour_usd),
            ("--deployment-hour-cost", self.deployment_hour_usd),
        ):
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(flag, value, "must be a positive number of US dollars per hour")
        if isinstance(self.gpus, bool) or not isinstance(self.gpus, int) or self.gpus < 1:
            raise ConfigError("--gpus", self.gpus, "must be a whole number of GPUs, 1 or more")
        if self.gpu_hour_usd is not None and self.deployment_hour_usd is not None:
            raise ConfigError(
                "--deployment-hour-cost",
                self.deployment_hour_usd,
                "give it or --gpu-hour-cost (with --gpus), not both",
            )

    @property
    def per_hour_usd(self) -> float | None:
        if self.deployment_hour_usd is not None:
            return self.deployment_hour_usd
        return None if self.gpu_hour_usd is None else self.gpu_hour_usd * self.gpus


_PROXY_SCHEMES = ("http://", "https://", "socks5://", "socks5h://")


@dataclass(frozen=True)
class TransportConfig:
    """How to reach the target. ``base_url`` may carry a path prefix (``http://h:8000/proxy``)."""

    base_url: str
    kind: Literal["lean", "httpx"] = "lean"
    connect_timeout_s: float = 10.0
    verify: bool = True
    ca_file: str | None = None
    http2: bool = False
    proxy: str | None = None
    pool_size: int = 128  # httpx only: connections in the shared pool, one per user

    def __post_init__(self) -> None:
        try:
            parse_origin(self.base_url)
        except ValueError as exc:
            raise ConfigError("base_url", redact_url(self.base_url), str(exc)) from None
        if self.kind not in ("lean", "httpx"):
            raise ConfigError("kind", self.kind, "must be 'lean' or 'httpx'")
        timeout = self.connect_timeout_s
        if not (isinstance(timeout, int | float) and math.isfinite(timeout) and timeout > 0):
            raise ConfigError("connect_timeout_s", timeout, "must be a positive number")
        if isinstance(self.pool_size, bool) or not isinstance(self.pool_size, int):
            raise ConfigError("pool_size", self.pool_size, "must be an integer")
        if self.pool_size < 1:
            raise ConfigError("pool_size", self.pool_size, "must be at least 1")
        if self.ca_file is not None and not os.path.isfile(self.ca_file):
            raise ConfigError("ca_file", self.ca_file, "no such file")
        if self.http2 and self.kind != "httpx":
            raise ConfigError("http2", self.http2, "HTTP/2 needs the httpx transport")
        if self.proxy is not None:
            self._check_proxy(self.proxy)

    def _check_proxy(self, proxy: str) -> None:
        if self.kind != "httpx":
            raise ConfigError("proxy", proxy, "proxies need the httpx transport")
        if not proxy.startswith(_PROXY_SCHEMES):
            raise ConfigError("proxy", proxy, "must be an http, https or socks5 URL")
        if proxy.startswith("socks") and find_spec("socksio") is None:
            raise ConfigError("proxy", proxy, "a SOCKS proxy needs httpx[socks] installed")


@dataclass(frozen=True, slots=True)
class RunConfig:
    host: str
    request: RequestConfig
    workload: WorkloadConfig
    phases: PhaseConfig
    timeouts: Timeouts
    transport: TransportConfig
    sweep: SweepConfig = field(default_factory=SweepConfig)
    exporter: ExporterConfig = field(default_factory=ExporterConfig)
    open_loop: OpenLoopConfig = field(default_factory=OpenLoopConfig)
    trace: TraceConfig = field(default_factory=TraceConfig)
    fleet: FleetConfig = field(default_factory=FleetConfig)
    checks: ChecksConfig = field(default_factory=ChecksConfig)
    cost: CostConfig = field(default_factory=CostConfig)
    server_control: ServerControlConfig = field(default_factory=ServerControlConfig)
    history: HistoryConfig = field(default_factory=HistoryConfig)
    gpu_metrics: str | None = None  # a DCGM exporter's /metrics URL, scraped per stage
    results_dir: str = "results"
    run_id: str | None = None
    scenario: str = "chat"

    def __post_init__(self) -> None:
        if self.workload.conversation.state == "server" and self.request.api != "responses":
            problem = "only the Responses API keeps a conversation on the server: add --api responses"
            raise ConfigError("--conversation-state", "server", problem)

    def public_dict(self) -> dict[str, JSON]:
        """Every setting except secrets, JSON-safe, for summary.json."""
        transport = asdict(self.transport)
        for key in ("base_url", "proxy"):
            if transport.get(key):
                transport[key] = redact_url(transport[key])
        out: dict[str, JSON] = {
            "host": redact_url(self.host),
            "scenario": self.scenario,
            "results_dir": self.results_dir,
            "request": {
                "endpoint": self.request.endpoint,
                "model": self.request.model,
                "stream": self.request.stream,
                "ignore_eos": self.request.ignore_eos,
                "extra_body": dict(self.request.extra_body),
                "extra_headers": sorted(name for name, _ in self.request.extra_headers),
                "api_key_set": self.request.api_key is not None,
                "api_key_env": self.request.api_key_env,
                "server_timings": self.request.server_timings,
                "api": self.request.api,
            },
            "workload": asdict(self.workload),
            "phases": asdict(self.phases),
            "sweep": asdict(self.sweep),
            "exporter": {
                **asdict(self.exporter),
                "otlp_endpoint": self.exporter.otlp_endpoint and redact_url(self.exporter.otlp_endpoint),
            },
            "server_control": asdict(self.server_control),
            "open_loop": asdict(self.open_loop),
            "trace": asdict(self.trace),
            "fleet": asdict(self.fleet),
            "checks": {
                "slo": [rule.text for rule in self.checks.slo],
                "max_error_rate": self.checks.max_error_rate,
                "fail_on_client_bound": self.checks.fail_on_client_bound,
            },
            "cost": {**asdict(self.cost), "per_hour_usd": self.cost.per_hour_usd},
            "gpu_metrics": None if self.gpu_metrics is None else redact_url(self.gpu_metrics),
            "history": {
                "enabled": self.history.enabled,
                # a postgresql:// URL's password, in its user part or its query (?password=)
                "path": None if self.history.path is None else redact_text(redact_url(self.history.path)),
                "labels": dict(self.history.labels),
            },
            "timeouts": asdict(self.timeouts),
            "transport": transport,
        }
        return out
