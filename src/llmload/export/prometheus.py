"""The live Prometheus endpoint: a ``Collector`` that reads the run's state at scrape time.

Nothing is recorded into prometheus_client's own metric objects: the run already keeps exact,
mergeable ``ClassicStats`` per stage (on the master, merged over the fleet), so a scrape renders
them as metric families, with its own ``CollectorRegistry`` (never the process-global default,
which would mix in whatever else the process registered). Labels are bounded: target, model,
scenario and stage, plus outcome or worker where stated; never prompts or request ids.

    registry = make_registry(source)           # what a scrape, a push or a test reads
    handle = start_exporter(config.exporter, source)
    ...
    handle.close()

The HTTP server is prometheus_client's (a thread; cooperative under Locust's gevent patching).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from threading import Thread
from typing import Protocol, cast
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, generate_latest, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.utils import floatToGoString as _untyped_go_float

from llmload.config import ExporterConfig
from llmload.errors import ErrorKind
from llmload.metrics.classic import BY_KEY, ClassicStats
from llmload.record import OK, UNFINISHED

COMMON_LABELS = ("target", "model", "scenario")
_NS = 1e9
# prometheus_client's own ``le`` formatting, so our labels read like vLLM's (``2560.0``, ``0.001``).
_go_float = cast(Callable[[float], str], _untyped_go_float)

# Classic histogram key -> (family name, help). Plain names carry vLLM's bounds; their ``_fine``
# siblings 1-2-5 per decade from 100 µs (see llmload.metrics.classic and docs/grafana.md).
_PLAIN: dict[str, tuple[str, str]] = {
    "ttft": ("llmload_time_to_first_token_seconds", "Time to the first token-bearing event."),
    "ttfot": ("llmload_time_to_first_output_token_seconds", "Time to the first content event."),
    "itl": ("llmload_inter_token_latency_seconds", "Inter-token latency, one sample per token."),
    "tpot": ("llmload_request_time_per_output_token_seconds", "Per-request time per output token."),
    "e2e": ("llmload_e2e_request_latency_seconds", "End-to-end request latency."),
    "chunk_gap": ("llmload_chunk_gap_seconds", "Raw gap between token-bearing reads."),
    "queue": ("llmload_client_queue_seconds", "How late the client sent a scheduled request."),
    "tokens_per_event": ("llmload_tokens_per_event", "Tokens of each token-bearing event but the first."),
    "prompt_tokens": ("llmload_request_prompt_tokens", "Prompt tokens per request (server usage)."),
    "generation_tokens": ("llmload_request_generation_tokens", "Output tokens per request."),
}
HISTOGRAMS: dict[str, tuple[str, str]] = {
    key: _PLAIN[key] if key in _PLAIN else (
        _PLAIN[spec.source][0].replace("_seconds", "_fine_seconds"),
        _PLAIN[spec.source][1] + " Fine buckets: 1-2-5 per decade from 100 µs.",
    )
    for key, spec in BY_KEY.items()
}
# Source gauge key -> (family name, help).
GAUGES: dict[str, tuple[str, str]] = {
    "users": ("llmload_users", "Running simulated users."),
    "in_flight": ("llmload_in_flight_requests", "Requests sent and not yet finished."),
    "workers": ("llmload_connected_workers", "Connected Locust workers (1 in a local run)."),
    "stage": ("llmload_stage", "Index of the current stage."),
    "concurrency": ("llmload_stage_concurrency", "Concurrency (users) of the current stage."),
}
# Health key -> (family name, help, factor to the exported unit).
HEALTH: dict[str, tuple[str, str, float]] = {
    "loop_lag_p99_ms": ("llmload_client_loop_lag_p99_seconds", "p99 event-loop lag.", 1e-3),
    "cpu_percent": ("llmload_client_cpu_ratio", "CPU, as a fraction of one core.", 1e-2),
    "events_per_read_mean": ("llmload_client_events_per_read", "Mean events per socket read.", 1.0),
}
OUTCOMES: tuple[str, ...] = (OK, *(kind.value for kind in ErrorKind), UNFINISHED)


class ExportSource(Protocol):
    """What the exporter reads at each scrape; the Locust session (or the master) provides it."""

    def classic(self) -> Mapping[int, ClassicStats]: ...  # cumulative per stage since the start

    def gauges(self) -> Mapping[str, float]: ...  # "users", "in_flight", "workers", "stage", ...

    def health(self) -> Mapping[str, Mapping[str, float | None]]: ...  # per process or worker

    def labels(self) -> Mapping[str, str]: ...  # "run_id", "target", "model", "scenario", "version"


class LlmloadCollector:
    """prometheus_client's ``Collector`` protocol over an ``ExportSource``."""

    def __init__(self, source: ExportSource) -> None:
        self.source = source

    def describe(self) -> list[Metric]:
        # Empty: registering must not call the source before the run exists.
        return []

    def collect(self) -> Iterator[Metric]:
        labels = self.source.labels()
        common = [labels.get(name, "") for name in COMMON_LABELS]
        # Stage 0 exists in every run: exporting it from the first scrape starts every counter
        # at zero, so increase() over a run is exact instead of missing the first interval.
        stages = dict(self.source.classic()) or {0: ClassicStats()}
        yield _run_info(labels, common)
        yield from _histograms(stages, common)
        yield from _counters(stages, common)
        yield from _gauges(self.source.gauges(), common)
        yield from _health(self.source.health(), common)


def _run_info(labels: Mapping[str, str], common: list[str]) -> Metric:
    names = ["run_id", "version", *COMMON_LABELS]
    family = GaugeMetricFamily("llmload_run_info", "Always 1; labels identify the run.", labels=names)
    family.add_metric([labels.get("run_id", ""), labels.get("version", ""), *common], 1)
    return family


def _histograms(stages: Mapping[int, ClassicStats], common: list[str]) -> Iterator[Metric]:
    names = [*COMMON_LABELS, "stage"]
    for key, (name, help_text) in HISTOGRAMS.items():
        spec = BY_KEY[key]
        scale = 1 / _NS if spec.seconds else 1.0
        les = [_go_float(bound * scale) for bound in spec.bounds] + ["+Inf"]
        family = HistogramMetricFamily(name, help_text, labels=names)
        for stage, stats in sorted(stages.items()):
            cumulative = stats.cumulative(key)
            family.add_metric([*common, str(stage)], buckets=list(zip(les, cumulative, strict=True)),
                              sum_value=stats.sums[spec.source] * scale)
        yield family


def _counters(stages: Mapping[int, ClassicStats], common: list[str]) -> Iterator[Metric]:
    names = [*COMMON_LABELS, "stage"]
    requests = CounterMetricFamily("llmload_requests", "Finished requests by outcome (every phase).",
                                   labels=[*names, "outcome"])
    prompt = CounterMetricFamily("llmload_prompt_tokens", "Prompt tokens, from usage where the "
                                 "server sent it.", labels=names)
    generation = CounterMetricFamily("llmload_generation_tokens", "Output tokens of every "
                                     "finished request.", labels=names)
    for stage, stats in sorted(stages.items()):
        values = [*common, str(stage)]
        extra = sorted(set(stats.outcomes) - set(OUTCOMES))
        for outcome in (*OUTCOMES, *extra):
            requests.add_metric([*values, outcome], stats.outcomes.get(outcome, 0))
        prompt.add_metric(values, stats.prompt_tokens_total)
        generation.add_metric(values, stats.generation_tokens_total)
    yield from (requests, prompt, generation)


def _gauges(values: Mapping[str, float], common: list[str]) -> Iterator[Metric]:
    for key, (name, help_text) in GAUGES.items():
        if key in values:
            family = GaugeMetricFamily(name, help_text, labels=list(COMMON_LABELS))
            family.add_metric(common, float(values[key]))
            yield family


def _health(per_worker: Mapping[str, Mapping[str, float | None]], common: list[str]) -> Iterator[Metric]:
    for key, (name, help_text, factor) in HEALTH.items():
        family = GaugeMetricFamily(name, help_text, labels=[*COMMON_LABELS, "worker"])
        for worker, health in sorted(per_worker.items()):
            value = health.get(key)
            if value is not None:  # not measured yet: no sample rather than a false zero
                family.add_metric([*common, worker], value * factor)
        yield family


def make_registry(source: ExportSource) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LlmloadCollector(source))
    return registry


def exposition(source: ExportSource) -> bytes:
    """The text a scrape returns, for tests and for the final push."""
    return generate_latest(make_registry(source))


@dataclass(slots=True)
class ExporterHandle:
    server: WSGIServer
    thread: Thread
    registry: CollectorRegistry

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_exporter(config: ExporterConfig, source: ExportSource,
                   registry: CollectorRegistry | None = None) -> ExporterHandle:
    """Serve ``source`` on ``config.host:config.port`` (port 0 here: any free port)."""
    registry = registry if registry is not None else make_registry(source)
    server, thread = start_http_server(config.port, config.host, registry=registry)
    return ExporterHandle(server, thread, registry)
