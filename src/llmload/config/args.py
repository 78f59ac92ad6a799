"""llmload's options (declared in ``llmload.config.options``) on Locust's parser, and the one function
that turns Locust's parsed options into a RunConfig.

``to_config`` parses and maps; the checks live with the typed config each value lands in, so
they run once and name the flag the user gave.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from types import MappingProxyType

import orjson

from llmload.config.options import add_arguments, from_form
from llmload.config.settings import (
    ChecksConfig,
    CostConfig,
    ExporterConfig,
    FleetConfig,
    OpenLoopConfig,
    PhaseConfig,
    RequestConfig,
    RunConfig,
    SweepConfig,
    TraceConfig,
    TransportConfig,
    WorkloadConfig,
)
from llmload.core.recorder import Timeouts
from llmload.errors import ConfigError
from llmload.metrics.slo import parse_max_error_rate, parse_slo
from llmload.protocol.jsonvalue import JSON
from llmload.workload.conversations import ConversationSpec
from llmload.workload.images import ImageSpec, parse_sizes
from llmload.workload.lengths import Fixed, parse_length_spec
from llmload.workload.prefixes import PrefixSpec
from llmload.workload.ramps import parse_ramp
from llmload.workload.replay import Replay, ReplaySpec, parse_window
from llmload.workload.traces import load_trace


def add_options(parser: argparse.ArgumentParser) -> None:
    """Register llmload's options on Locust's (configargparse) parser."""
    add_arguments(parser.add_argument_group("llmload"))


def _extra_body(text: str | None) -> Mapping[str, JSON]:
    if not text:
        return MappingProxyType({})
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ConfigError("--extra-body", text, f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise ConfigError("--extra-body", text, "must be a JSON object like '{\"temperature\": 0}'")
    return MappingProxyType(value)


def _extra_headers(text: str | None) -> tuple[tuple[str, str], ...]:
    headers = []
    for item in (text or "").split(";"):
        if not item.strip():
            continue
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise ConfigError("--extra-header", text, "use 'Name: value; Other: value'")
        headers.append((name.strip(), value.strip()))
    return tuple(headers)


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError("--levels", text, "give comma-separated integers, e.g. 1,2,4,8") from None
    if not levels or min(levels) < 1:
        raise ConfigError("--levels", text, "give at least one level, each >= 1")
    return levels


def _rates(text: str | None) -> tuple[float, ...]:
    if not text:
        return ()
    try:
        rates = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError("--rates", text, "give comma-separated numbers, e.g. 1,2,5,10") from None
    if not rates or min(rates) <= 0:
        raise ConfigError("--rates", text, "give at least one rate, each > 0")
    return rates


def _check_locust_numbers(opts: argparse.Namespace) -> None:
    """Locust's own numbers that it would take and fail on later, with a traceback."""
    users = getattr(opts, "num_users", None)
    if users is not None and users < 1:
        raise ConfigError("-u/--users", users, "must be at least 1")
    rate = getattr(opts, "spawn_rate", None)
    if rate is not None and rate <= 0:
        raise ConfigError("-r/--spawn-rate", rate, "must be greater than 0")
    run_time = getattr(opts, "run_time", None)
    if isinstance(run_time, int | float) and run_time <= 0:
        raise ConfigError("-t/--run-time", run_time, "must be greater than 0")


# TransportConfig names its fields; the user knows them by their flags.
_TRANSPORT_FLAGS = {
    "base_url": "--host",
    "kind": "--transport",
    "connect_timeout_s": "--connect-timeout",
    "ca_file": "--ca-file",
    "http2": "--http2",
    "proxy": "--proxy",
    "pool_size": "--users",
}


def _trace_config(opts: argparse.Namespace, scenario: str, phases: PhaseConfig) -> TraceConfig:
    """The replay's settings, checked against the file itself (read once here, at start-up)."""
    path = getattr(opts, "trace", None)
    if path is None:
        if scenario == "trace":
            raise ConfigError("--trace", None, "the trace scenario replays a file: give --trace FILE")
        return TraceConfig()
    if scenario != "trace":
        problem = 'replaying a trace needs the trace scenario: locust -f "$(llmload scenarios trace)"'
        raise ConfigError("--trace", path, problem)
    if phases.warmup_requests:
        problem = (
            "a replay has no warm-up requests: the trace starts with the measured window "
            "(skip the trace's start with --trace-window)"
        )
        raise ConfigError("--warmup-requests", phases.warmup_requests, problem)
    start, end = parse_window(opts.trace_window)
    config = TraceConfig(path, opts.trace_format, ReplaySpec(opts.trace_speed, start, end, opts.trace_loop))
    Replay.of(load_trace(path, config.format), config.replay)  # its errors now, not mid-run
    return config


def to_config(opts: argparse.Namespace, scenario: str = "chat", host: str | None = None) -> RunConfig:
    """Build and validate the run's config from Locust's parsed options.

    ``host`` overrides ``opts.host``: a worker learns the host from the master's spawn message,
    not from its own command line.
    """
    from_form(opts)
    host = host or opts.host
    if not host:
        raise ConfigError("--host", host, "give the server's base URL, e.g. http://127.0.0.1:8000")
    _check_locust_numbers(opts)
    if opts.dataset is not None and not os.path.isfile(opts.dataset):
        raise ConfigError("--dataset", opts.dataset, "no such file")
    if opts.tokenize not in ("off", "server") and not os.path.isfile(opts.tokenize):
        raise ConfigError("--tokenize", opts.tokenize, "give off, server, or the path of a tokenizer.json")
    request = RequestConfig(
        model=opts.model,
        stream=not opts.no_stream,
        ignore_eos=opts.ignore_eos,
        extra_body=_extra_body(opts.extra_body),
        extra_headers=_extra_headers(opts.extra_header),
        api_key=os.environ.get(opts.api_key_env) or None,
        api_key_env=opts.api_key_env,
    )
    prompt_lengths = parse_length_spec("--prompt-tokens", opts.prompt_tokens, cap=opts.max_length)
    output_lengths = parse_length_spec("--max-tokens", opts.max_tokens, cap=opts.max_length)
    workload = WorkloadConfig(
        prompt_tokens=prompt_lengths.upper,
        max_tokens=output_lengths.upper,
        output_jitter=opts.output_jitter,
        dataset=opts.dataset,
        seed=opts.seed,
        salt=opts.salt or "",
        prefix_cache=opts.prefix_cache,
        prompt_lengths=None if isinstance(prompt_lengths, Fixed) else prompt_lengths,
        output_lengths=None if isinstance(output_lengths, Fixed) else output_lengths,
        max_length=opts.max_length,
        prefix=PrefixSpec(opts.prefix_groups, opts.prefix_tokens, opts.prefix_share),
        conversation=ConversationSpec(opts.turns, opts.think_time_s),
        embedding_batch=opts.embedding_batch,
        images=ImageSpec(opts.images, parse_sizes(opts.image_sizes), opts.image_format, opts.image_dir),
        tokenize=opts.tokenize,
    )
    timeouts = Timeouts.from_flags(opts.first_token_timeout, opts.stall_timeout, opts.request_timeout)
    try:
        transport = TransportConfig(
            base_url=host.rstrip("/"),
            kind=opts.transport,
            connect_timeout_s=opts.connect_timeout,
            verify=not opts.insecure,
            ca_file=opts.ca_file,
            http2=opts.http2,
            proxy=opts.proxy,
            # A worker does not know the fleet's user count: size its pool generously.
            pool_size=max(opts.num_users or 1024, 1),
        )
    except ConfigError as exc:  # named by its field: the user knows it by its flag
        raise ConfigError(_TRANSPORT_FLAGS.get(exc.option, exc.option), exc.value, exc.problem) from None
    phases = PhaseConfig(opts.warmup_requests, opts.warmup_s, opts.drain_s)
    trace = _trace_config(opts, scenario, phases)
    sweep = SweepConfig(
        _levels(opts.levels),
        opts.stage_s,
        opts.repeat,
        _rates(opts.rates),
        parse_ramp(opts.ramp),
        opts.until_saturated,
    )
    open_loop = OpenLoopConfig(opts.rate, opts.arrival, opts.burstiness, opts.max_in_flight)
    return RunConfig(
        host=host,
        request=request,
        workload=workload,
        phases=phases,
        timeouts=timeouts,
        transport=transport,
        sweep=sweep,
        open_loop=open_loop,
        trace=trace,
        exporter=ExporterConfig(
            opts.prometheus_port,
            opts.prometheus_host,
            opts.prometheus_linger_s,
            opts.pushgateway_url,
            opts.pushgateway_delete,
        ),
        fleet=FleetConfig(opts.report_interval_s, opts.final_wait_s),
        checks=ChecksConfig(
            parse_slo(opts.slo), parse_max_error_rate(opts.max_error_rate), opts.fail_on_client_bound
        ),
        cost=CostConfig(opts.gpu_hour_cost, opts.gpus, opts.deployment_hour_cost),
        gpu_metrics=opts.gpu_metrics or None,
        results_dir=opts.results_dir,
        run_id=opts.run_id,
        scenario=scenario,
    )
