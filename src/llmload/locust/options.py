"""llmload's options on Locust's parser, and the one function that turns them into a RunConfig.

Every option has an ``LLMLOAD_*`` environment variable (Kubernetes Jobs set those). The API key
has no flag at all, so it can never land in shell history, ``ps`` output or a report: it is read
from the environment variable named by ``--api-key-env``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import orjson

from llmload.config import (
    ChecksConfig,
    ExporterConfig,
    FleetConfig,
    OpenLoopConfig,
    PhaseConfig,
    RequestConfig,
    RunConfig,
    SweepConfig,
    Timeouts,
    WorkloadConfig,
)
from llmload.errors import ConfigError
from llmload.metrics.slo import parse_max_error_rate, parse_slo
from llmload.transport.factory import TransportConfig
from llmload.workload.arrivals import KINDS
from llmload.workload.conversations import ConversationSpec
from llmload.workload.lengths import Fixed, parse_length_spec
from llmload.workload.prefixes import PrefixSpec

# (flag, type, default, help); the env var is LLMLOAD_ + the flag upper-cased with underscores.
_OPTIONS: tuple[tuple[str, type, Any, str], ...] = (
    ("--model", str, None, "model name to request (default: the first of /v1/models)"),
    ("--max-tokens", str, "128", "output tokens per request: 128, uniform:64:256, normal:128:32, "
     "lognormal:128:0.5"),
    ("--prompt-tokens", str, "128", "synthetic prompt length in words (~tokens), fixed or a "
     "distribution like --max-tokens"),
    ("--output-jitter", float, 0.0, "spread max-tokens uniformly by +-this fraction (seeded)"),
    ("--dataset", str, None, "JSONL of chat messages or ShareGPT JSON instead of synthetic prompts"),
    ("--seed", int, 0, "seed for prompt lengths, offsets, dataset order and arrival times"),
    ("--salt", str, None, "text mixed into every prompt's unique first word (default: new per "
     "run, so no run hits the prefix cache the previous one filled; the summary records it: "
     "give it back to resend a run's prompts exactly)"),
    ("--max-length", int, 32768, "cap of normal and lognormal length draws without their own :MAX"),
    ("--prefix-groups", int, 0, "shared system prompts: groups of users sharing one (0: off)"),
    ("--prefix-tokens", int, 512, "length of each shared system prompt, in words (~tokens)"),
    ("--prefix-share", float, 1.0, "fraction of requests starting with their group's prompt"),
    ("--turns", int, 4, "conversation scenario: turns per conversation"),
    ("--think-time-s", float, 0.0, "conversation scenario: mean pause between turns (+-50 percent)"),
    ("--extra-body", str, None, "JSON object merged into every request body"),
    ("--extra-header", str, None, "extra request headers, 'Name: value' separated by ';'"),
    ("--api-key-env", str, "OPENAI_API_KEY", "environment variable holding the API key"),
    ("--warmup-requests", int, None, "requests excluded as warm-up (default: the user count)"),
    ("--warmup-s", float, 0.0, "minimum warm-up duration in seconds"),
    ("--drain-s", float, 120.0, "at the end, how long in-flight requests may take to finish"),
    ("--levels", str, "1,2,4,8,16,32,64,128", "sweep: concurrency levels, comma-separated"),
    ("--stage-s", float, 30.0, "sweep: measured window of each stage, in seconds"),
    ("--repeat", int, 1, "sweep: run each level this many times and report the spread"),
    ("--rates", str, None, "sweep: open-loop request rates (req/s), comma-separated, not levels"),
    ("--rate", float, None, "open loop (OpenLoopUser): requests per second over the whole fleet"),
    ("--arrival", str, "poisson", "open loop: constant, poisson or gamma inter-arrival times"),
    ("--burstiness", float, 1.0, "open loop: gamma shape (1: Poisson, <1: burstier)"),
    ("--max-in-flight", int, 1024, "open loop: arrivals beyond this wait in the client"),
    ("--prometheus-port", int, 0, "serve live Prometheus metrics on this port (0: off)"),
    ("--prometheus-host", str, "127.0.0.1", "address the metrics endpoint binds (0.0.0.0 in pods)"),
    ("--prometheus-linger-s", float, 0.0, "keep serving metrics this long after the run ends"),
    ("--pushgateway-url", str, None, "push the final metrics snapshot to this Pushgateway"),
    ("--report-interval-s", float, 1.0, "distributed: seconds between a worker's reports"),
    ("--final-wait-s", float, 30.0, "distributed: how long the master waits for final reports"),
    ("--slo", str, None, "objectives every stage must meet, e.g. 'ttft_p99_ms<=200,tpot_p50_ms<=50'"),
    ("--max-error-rate", str, "1%", "fail (exit 1) when a stage's failed/attempted exceeds this "
     "(0.01 or 1%; 1 accepts anything and turns off the fail-fast stop)"),
    ("--results-dir", str, "results", "directory under which each run writes its results"),
    ("--run-id", str, None, "name of this run's results subdirectory (default: time-based)"),
    ("--transport", str, "lean", "lean (HTTP/1.1 on gevent sockets) or httpx (HTTP/2, proxies)"),
    ("--connect-timeout", float, 10.0, "seconds to open a connection"),
    ("--first-token-timeout", float, 300.0, "seconds from sending to the first token"),
    ("--stall-timeout", float, 120.0, "seconds allowed between two reads after the first token"),
    ("--request-timeout", float, 0.0, "seconds for a whole request (0: no limit)"),
    ("--ca-file", str, None, "CA bundle to verify the target's TLS certificate with"),
    ("--proxy", str, None, "HTTP proxy URL (httpx transport only)"),
)
_FLAGS = (
    ("--no-stream", "request non-streaming responses"),
    ("--ignore-eos", "ask the server to ignore EOS so every request produces max-tokens"),
    ("--prefix-cache", "let prompts share a prefix (no unique salt): measures cache hits"),
    ("--insecure", "do not verify the target's TLS certificate"),
    ("--http2", "use HTTP/2 (httpx transport only)"),
    ("--pushgateway-delete", "delete the pushed group after the linger time"),
    ("--fail-on-client-bound", "exit 4 when a stage was client-bound"),
)


def _env_name(flag: str) -> str:
    return "LLMLOAD_" + flag.removeprefix("--").replace("-", "_").upper()


def add_options(parser: Any) -> None:
    """Register llmload's options on Locust's (configargparse) parser."""
    group = parser.add_argument_group("llmload")
    for flag, kind, default, text in _OPTIONS:
        group.add_argument(flag, type=kind, default=default, env_var=_env_name(flag), help=text)
    for flag, text in _FLAGS:
        group.add_argument(flag, action="store_true", env_var=_env_name(flag), help=text)


def _extra_body(text: str | None) -> Mapping[str, Any]:
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


def _positive(option: str, value: float | None) -> None:
    if value is not None and value <= 0:
        raise ConfigError(option, value, "must be greater than 0")


def _not_negative(option: str, value: float | None) -> None:
    if value is not None and value < 0:
        raise ConfigError(option, value, "must be 0 or more (0: no limit)")


def _check_locust_numbers(opts: Any) -> None:
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


def _transport_config(**fields: Any) -> TransportConfig:
    try:
        return TransportConfig(**fields)
    except ConfigError as exc:
        raise ConfigError(_TRANSPORT_FLAGS.get(exc.option, exc.option), exc.value, exc.problem) from None


def to_config(opts: Any, scenario: str = "chat", host: str | None = None) -> RunConfig:
    """Build and validate the run's config from Locust's parsed options.

    ``host`` overrides ``opts.host``: a worker learns the host from the master's spawn message,
    not from its own command line.
    """
    host = host or opts.host
    if not host:
        raise ConfigError("--host", host, "give the server's base URL, e.g. http://127.0.0.1:8000")
    _check_locust_numbers(opts)
    _positive("--connect-timeout", opts.connect_timeout)
    for flag, value in (("--first-token-timeout", opts.first_token_timeout),
                        ("--stall-timeout", opts.stall_timeout),
                        ("--request-timeout", opts.request_timeout),
                        ("--think-time-s", opts.think_time_s)):
        _not_negative(flag, value)
    if not 0 <= opts.output_jitter < 1:
        raise ConfigError("--output-jitter", opts.output_jitter, "must be in [0, 1)")
    if opts.dataset is not None and not os.path.isfile(opts.dataset):
        raise ConfigError("--dataset", opts.dataset, "no such file")
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
    )
    timeouts = Timeouts(
        first_token_s=opts.first_token_timeout or None,
        stall_s=opts.stall_timeout or None,
        total_s=opts.request_timeout or None,
    )
    transport = _transport_config(
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
    phases = PhaseConfig(opts.warmup_requests, opts.warmup_s, opts.drain_s)
    _positive("--stage-s", opts.stage_s)
    _positive("--repeat", opts.repeat)
    sweep = SweepConfig(_levels(opts.levels), opts.stage_s, opts.repeat, _rates(opts.rates))
    if opts.arrival not in KINDS:
        raise ConfigError("--arrival", opts.arrival, f"must be one of {', '.join(KINDS)}")
    _positive("--rate", opts.rate)
    _positive("--burstiness", opts.burstiness)
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
        exporter=ExporterConfig(opts.prometheus_port, opts.prometheus_host, opts.prometheus_linger_s,
                                opts.pushgateway_url, opts.pushgateway_delete),
        fleet=FleetConfig(opts.report_interval_s, opts.final_wait_s),
        checks=ChecksConfig(parse_slo(opts.slo), parse_max_error_rate(opts.max_error_rate),
                            opts.fail_on_client_bound),
        results_dir=opts.results_dir,
        run_id=opts.run_id,
        scenario=scenario,
    )


def main(argv: Sequence[str]) -> int:
    """`llmload options`: every llmload option of the locustfiles, with its environment variable.

    Locust prints its ``--help`` before it imports a locustfile, so our options never show there.
    """
    del argv
    rows = [(flag, _env_name(flag), "" if default is None else str(default), text)
            for flag, _kind, default, text in _OPTIONS]
    rows += [(flag, _env_name(flag), "off", text) for flag, text in _FLAGS]
    width = max(len(r[0]) for r in rows)
    env_width = max(len(r[1]) for r in rows)
    print("llmload options (for locust -f locustfiles/*.py; each also an environment variable):")
    for flag, env, default, text in rows:
        shown = f" (default {default})" if default else ""
        print(f"  {flag:<{width}}  {env:<{env_width}}  {text}{shown}")
    return 0
