"""Every llmload option, declared once: its flag, ``LLMLOAD_*`` variable, type, default, help,
group, and the ``RunConfig`` field it sets (with the parser of values that need one).

From this one table come Locust's parser and the step from parsed options to the RunConfig
(``llmload.config.args``), ``llmload options``, the options ``llmload sweep`` and ``llmload
search`` pass on to Locust, docs/options.md, the keys a Kubernetes ConfigMap may set, and the
choices of a text option (the Literal of the field it sets). A test holds every RunConfig field
to exactly one option or a stated reason. Checks live with the typed config that uses a value
(``llmload.config.settings`` and the workload specs), each naming its flag, so they run once,
wherever the value came from: command line, environment or ConfigMap.

The API key has no option at all, so it can never land in shell history, ``ps`` output or a
report: it is read from the environment variable named by ``--api-key-env``.
"""

from __future__ import annotations

from argparse import BooleanOptionalAction as _BooleanOptional
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args, get_origin, get_type_hints

from llmload.config import values
from llmload.config.apikey import DEFAULT_ENV
from llmload.config.settings import RunConfig
from llmload.config.values import Parse

_NOT_PASSED = object()


def field_type(path: str) -> Any:
    """The annotated type of a RunConfig field, by dotted path through nested dataclasses."""
    owner: Any = RunConfig
    hint: Any = None
    for name in path.split("."):
        hint = get_type_hints(owner)[name]
        owner = hint
    return hint


def choices_of(path: str) -> tuple[str, ...] | None:
    hint = field_type(path)
    if get_origin(hint) is Literal:
        return tuple(str(a) for a in get_args(hint))
    return None


@dataclass(frozen=True, slots=True)
class Option:
    flag: str
    help: str
    # What argparse turns the text into: a type, or a parser that raises ConfigError naming the
    # flag (config/values.py); bool: a switch, off unless given
    kind: Callable[[str], Any] = str
    default: Any = None
    group: str = "workload"
    # llmload sweep|search take the option too, with this default, and pass it on to Locust
    sweep_default: Any = _NOT_PASSED
    # The RunConfig field it sets, as a dotted path ("workload.prefix.groups"); a parser that
    # returns a tuple sets a tuple of fields.
    to: str | tuple[str, ...] = ""
    # How its value becomes the field's, when a type alone does not say (config/values.py).
    parse: Parse | None = None
    # Given once per value (--label a=1 --label b=2): the parsed value is a list, or None
    repeated: bool = False
    # Other spellings it answers to, kept so that command lines written for them still work
    aliases: tuple[str, ...] = ()
    # The values it takes, where no RunConfig field's Literal says (the commands' own options)
    allowed: tuple[str, ...] = ()
    metavar: str | None = None  # the value's name in --help, where the flag's own is unclear

    @property
    def fields(self) -> tuple[str, ...]:
        return (self.to,) if isinstance(self.to, str) else self.to

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The values it takes, or its field's Literal admits: the parser offers exactly those."""
        if self.allowed or not self.to:
            return self.allowed or None
        return choices_of(self.fields[0]) if self.parse is None and self.kind is str else None

    @property
    def on_start_form(self) -> bool:
        """Shown on Locust's web UI start form, and so set per swarm: what a run asks, not where
        its results and metrics go or how a fleet talks."""
        return self.group in _PER_RUN_GROUPS

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    @property
    def env(self) -> str:
        return "LLMLOAD_" + self.dest.upper()

    @property
    def in_sweep(self) -> bool:
        return self.sweep_default is not _NOT_PASSED

    def shown_default(self, default: Any = _NOT_PASSED) -> str:
        value = self.default if default is _NOT_PASSED else default
        if self.kind is bool:
            return "on" if value else "off"
        return "" if value is None else str(value)


_LEVELS = "1,2,4,8,16,32,64,128"
_PER_RUN_GROUPS = frozenset({"request", "workload", "checks"})

OPTIONS: tuple[Option, ...] = (
    # what each request asks
    Option(
        "--model",
        "model name to request (default: the first of /v1/models)",
        group="request",
        to="request.model",
    ),
    Option(
        "--no-stream",
        "request non-streaming responses",
        bool,
        group="request",
        to="request.stream",
        parse=values.negate,
    ),
    Option(
        "--ignore-eos",
        "ask the server to ignore EOS so every request produces max-tokens",
        bool,
        group="request",
        sweep_default=True,
        to="request.ignore_eos",
    ),
    Option(
        "--api",
        "the API the chat users speak: chat (/v1/chat/completions), completions, responses "
        "(/v1/responses) or messages (Anthropic's /v1/messages); auto: the locustfile's own",
        default="auto",
        group="request",
        sweep_default="auto",
        to="request.api",
    ),
    Option(
        "--server-timings",
        "ask for the server's own timing of each request (vLLM's include_metrics) and join it to "
        "the client's: auto (when the server is vLLM), on, off (never ask; what a server sends "
        "unasked, as llama.cpp's timings, is still joined)",
        default="auto",
        group="request",
        sweep_default="auto",
        to="request.server_timings",
    ),
    Option(
        "--extra-body",
        "JSON object merged into every request body",
        group="request",
        to="request.extra_body",
        parse=values.extra_body,
    ),
    Option(
        "--extra-header",
        "extra request headers, 'Name: value' separated by ';'",
        group="request",
        to="request.extra_headers",
        parse=values.extra_headers,
    ),
    Option(
        "--api-key-env",
        "environment variable holding the API key (the key itself is never a flag)",
        default=DEFAULT_ENV,
        group="request",
        # llmload sweep|search|tune|wait read the key themselves to wait for the server and ask
        # its pace; None there: not passed on, so Locust reads LLMLOAD_API_KEY_ENV as they did
        sweep_default=None,
        to="request.api_key_env",
    ),
    # the prompts and lengths
    Option(
        "--max-tokens",
        "output tokens per request: 128, uniform:64:256, normal:128:32, lognormal:128:0.5",
        default="128",
        sweep_default="256",
        to="workload.output_lengths",
        parse=values.output_lengths,
    ),
    Option(
        "--prompt-tokens",
        "synthetic prompt length in the server's tokens (see --tokenize; words where it cannot count), "
        "fixed or a distribution like --max-tokens",
        default="128",
        sweep_default="128",
        to="workload.prompt_lengths",
        parse=values.prompt_lengths,
    ),
    Option(
        "--output-jitter",
        "spread max-tokens by +-this fraction (seeded)",
        float,
        0.0,
        sweep_default=0.1,
        to="workload.output_jitter",
    ),
    Option(
        "--tokenize",
        "what --prompt-tokens counts: auto (the server's /tokenize where it has one, else words), "
        "off (words), server (the server's /tokenize) or a tokenizer.json file",
        default="auto",
        to="workload.tokenize",
        parse=values.tokenize,
    ),
    Option(
        "--max-length",
        "cap of normal and lognormal length draws without their own :MAX",
        int,
        32768,
        to="workload.max_length",
    ),
    Option(
        "--dataset",
        "JSONL of chat messages or ShareGPT JSON instead of synthetic prompts",
        to="workload.dataset",
        parse=values.existing_file,
    ),
    Option(
        "--seed",
        "seed for prompt lengths, offsets, dataset order and arrival times",
        int,
        0,
        sweep_default=0,
        to="workload.seed",
    ),
    Option(
        "--salt",
        "text mixed into every prompt's unique first word (default: new per run, so "
        "no run hits the prefix cache the previous one filled; the summary records it: give it "
        "back to resend a run's prompts exactly)",
        to="workload.salt",
        parse=values.text_or_empty,
    ),
    Option(
        "--prefix-cache",
        "let prompts share a prefix (no unique salt): measures cache hits",
        bool,
        to="workload.prefix_cache",
    ),
    Option(
        "--prefix-groups",
        "shared system prompts: groups of users sharing one (0: off)",
        int,
        0,
        to="workload.prefix.groups",
    ),
    Option(
        "--prefix-tokens",
        "length of each shared system prompt, in words (~tokens)",
        int,
        512,
        to="workload.prefix.tokens",
    ),
    Option(
        "--prefix-share",
        "fraction of requests starting with their group's prompt",
        float,
        1.0,
        to="workload.prefix.share",
    ),
    Option(
        "--turns",
        "conversation and agent scenarios: turns per conversation or session",
        int,
        4,
        to="workload.conversation.turns",
    ),
    Option(
        "--think-time-s",
        "conversation scenario: mean pause between turns (+-50 percent)",
        float,
        0.0,
        to="workload.conversation.think_time_s",
    ),
    Option(
        "--conversation-state",
        "conversation scenario: resend the history each turn, or keep it on the server "
        "(server: the Responses API's previous_response_id; needs --api responses)",
        str,
        "resend",
        to="workload.conversation.state",
    ),
    Option(
        "--agent-trace",
        "agent scenario: replay the recorded sessions of this JSONL file (AIPerf's session "
        "trace: session_id, messages, assistant_responses live or recorded, output_length, "
        "delay, tools, extra)",
        str,
        "",
        to="workload.agent.trace",
        parse=values.agent_trace,
    ),
    Option(
        "--tool-result-tokens",
        "agent scenario: words of each tool result added to a session's history",
        int,
        64,
        to="workload.agent.tool_result_tokens",
    ),
    Option(
        "--tool-latency-ms",
        "agent scenario: mean client-side tool time between turns (+-50 percent)",
        float,
        0.0,
        to="workload.agent.tool_latency_ms",
    ),
    Option(
        "--fan-out",
        "agent scenario: sub-agents run in parallel after turn --fan-out-at (0: none)",
        int,
        0,
        to="workload.agent.fan_out",
    ),
    Option(
        "--fan-out-at",
        "agent scenario: the turn after which sub-agents run",
        int,
        1,
        to="workload.agent.fan_out_at",
    ),
    Option(
        "--sub-agent-turns", "agent scenario: turns of each sub-agent", int, 2, to="workload.agent.sub_turns"
    ),
    Option(
        "--cancel",
        "share of requests the client closes after --cancel-after, as a user who moves on "
        "(counted as cancelled: neither ok nor failed)",
        float,
        0.0,
        to="workload.cancel.share",
    ),
    Option(
        "--cancel-after",
        "when a cancelled request is closed: MS, or LO-HI drawn uniformly, from its start",
        str,
        "500",
        to="workload.cancel.after_ms",
        parse=values.cancel_after,
    ),
    Option(
        "--tenants",
        "a TOML file of tenants sharing the server, each with its weight, model or LoRA adapter, "
        "headers, lengths and SLO (docs/workloads.md#tenants)",
        str,
        "",
        to="workload.tenants",
        parse=values.tenants,
    ),
    Option(
        "--session-header",
        "headers that carry a session's key (agent and conversation scenarios), for routers "
        "that keep a session on one replica; none: send none",
        str,
        "X-Session-Affinity,X-Session-ID",
        group="request",
        to="request.session_headers",
        parse=values.header_names,
    ),
    Option(
        "--images",
        "multimodal: image_url parts per chat request (0: none)",
        int,
        0,
        to="workload.images.count",
    ),
    Option(
        "--image-sizes",
        "multimodal: synthetic image sizes to draw from, e.g. 512x512,1024x768",
        default="512x512",
        to="workload.images.sizes",
        parse=values.image_sizes,
    ),
    Option(
        "--image-format",
        "multimodal: png or jpeg (synthetic images)",
        default="jpeg",
        to="workload.images.format",
    ),
    Option(
        "--image-dir",
        "multimodal: send the images in this directory instead of synthetic ones",
        to="workload.images.directory",
    ),
    Option(
        "--embedding-batch",
        "embeddings scenario: inputs per request, each of --prompt-tokens",
        int,
        1,
        to="workload.embedding_batch",
    ),
    Option(
        "--rerank-documents",
        "rerank scenario: documents per request, each of --prompt-tokens, ordered by one query",
        int,
        8,
        to="workload.rerank_documents",
    ),
    # stages
    Option(
        "--warmup-requests",
        "requests excluded as warm-up (default: the user count)",
        int,
        group="stages",
        to="phases.warmup_requests",
    ),
    Option(
        "--warmup-s", "minimum warm-up duration in seconds", float, 0.0, group="stages", to="phases.warmup_s"
    ),
    Option(
        "--requests",
        "measure this many requests per stage (over workers, at least this many: the master "
        "hears their counts every --report-interval-s): the window closes once they were sent, the drain "
        "waits for them, and a plain run then ends; -t, or a sweep's --stage-s, stays the limit",
        int,
        group="stages",
        sweep_default=None,
        to="phases.window_requests",
    ),
    Option(
        "--drain-s",
        "at the end, how long in-flight requests may take to finish",
        float,
        120.0,
        group="stages",
        to="phases.drain_s",
    ),
    Option(
        "--levels",
        "sweep: concurrency levels, comma-separated",
        default=_LEVELS,
        group="stages",
        sweep_default=_LEVELS,
        to="sweep.levels",
        parse=values.levels,
    ),
    Option(
        "--stage-s",
        "sweep: measured window of each stage, in seconds",
        float,
        30.0,
        group="stages",
        sweep_default=30.0,
        to="sweep.window_s",
    ),
    Option(
        "--repeat",
        "sweep: run each level this many times and report the spread",
        int,
        1,
        group="stages",
        sweep_default=1,
        to="sweep.repeat",
    ),
    Option(
        "--rates",
        "sweep: open-loop request rates (req/s), comma-separated, not levels",
        group="stages",
        sweep_default=None,
        to="sweep.rates",
        parse=values.rates,
    ),
    Option(
        "--ramp",
        "sweep: steps of --stage-s each instead of levels, no warm-up after the first: "
        "FROM:TO[:STEP] users or rate:FROM:TO[:STEP] req/s, e.g. 1:64:8",
        group="stages",
        sweep_default=None,
        to="sweep.ramp",
        parse=values.ramp,
    ),
    Option(
        "--until-saturated",
        "sweep: stop after the level where output tok/s stops growing while latency climbs",
        bool,
        group="stages",
        sweep_default=False,
        to="sweep.until_saturated",
    ),
    # open loop
    Option(
        "--rate",
        "open loop (OpenLoopUser): requests per second over the whole fleet",
        float,
        group="open loop",
        to="open_loop.rate",
    ),
    Option(
        "--arrival",
        "open loop: constant, poisson or gamma inter-arrival times",
        default="poisson",
        group="open loop",
        to="open_loop.arrival",
    ),
    Option(
        "--burstiness",
        "open loop: gamma shape (1: Poisson, <1: burstier)",
        float,
        1.0,
        group="open loop",
        to="open_loop.burstiness",
    ),
    Option(
        "--max-in-flight",
        "open loop: arrivals beyond this wait in the client",
        int,
        1024,
        group="open loop",
        to="open_loop.max_in_flight",
    ),
    # trace replay (the trace scenario)
    Option(
        "--trace",
        "trace: the file to replay (Mooncake JSONL, Azure CSV or JSONL)",
        group="trace",
        to="trace.path",
    ),
    Option(
        "--trace-format",
        "trace: mooncake, azure, jsonl or auto",
        str,
        "auto",
        group="trace",
        to="trace.format",
    ),
    Option(
        "--trace-speed",
        "trace: replay speed (2: twice as fast)",
        float,
        1.0,
        group="trace",
        to="trace.replay.speed",
    ),
    Option(
        "--trace-window",
        "trace: replay START:END seconds of it, e.g. 60:120 or 60:",
        group="trace",
        to=("trace.replay.start_s", "trace.replay.end_s"),
        parse=values.trace_window,
    ),
    Option(
        "--trace-loop",
        "trace: repeat it (its window) until the run time ends",
        bool,
        group="trace",
        to="trace.replay.loop",
    ),
    # what fails a run
    Option(
        "--slo",
        "objectives every stage must meet, e.g. 'ttft_p99_ms<=200,tpot_p50_ms<=50'",
        group="checks",
        sweep_default=None,
        to="checks.slo",
        parse=values.slo,
    ),
    Option(
        "--max-error-rate",
        "fail (exit 1) when a stage's failed/attempted exceeds this (0.01 "
        "or 1%; 1 accepts any rate and turns off the fail-fast stop)",
        default="1%",
        group="checks",
        sweep_default=None,
        to="checks.max_error_rate",
        parse=values.max_error_rate,
    ),
    Option(
        "--fail-on-client-bound",
        "exit 4 when a stage was client-bound",
        bool,
        group="checks",
        to="checks.fail_on_client_bound",
    ),
    # what the tokens cost, and what the GPUs did
    Option(
        "--gpu-hour-cost",
        "USD per GPU-hour: turns tok/s into $ per million tokens (with --gpus)",
        float,
        group="cost",
        sweep_default=None,
        to="cost.gpu_hour_usd",
    ),
    Option(
        "--gpus",
        "GPUs the deployment under test runs on (with --gpu-hour-cost)",
        int,
        1,
        group="cost",
        sweep_default=1,
        to="cost.gpus",
    ),
    Option(
        "--deployment-hour-cost",
        "USD per hour of the whole deployment, instead of --gpu-hour-cost x --gpus",
        float,
        group="cost",
        sweep_default=None,
        to="cost.deployment_hour_usd",
    ),
    Option(
        "--reset-prefix-cache",
        "ask the server to drop its prefix cache before the first request (vLLM in "
        "VLLM_SERVER_DEV_MODE, SGLang, llama.cpp with --slot-save-path); the summary says how it went",
        bool,
        group="server",
        sweep_default=False,
        to="server_control.reset_prefix_cache",
    ),
    Option(
        "--server-profile",
        "run the server's profiler (vLLM with --profiler-config, SGLang) over these stages' "
        "measured windows, e.g. 0 or 2,3",
        group="server",
        sweep_default=None,
        to="server_control.profile_stages",
        parse=values.stages,
    ),
    Option(
        "--gpu-metrics",
        "a Prometheus endpoint with NVIDIA DCGM exporter names (http://node:9400/metrics): "
        "GPU utilisation, memory and power per stage",
        group="cost",
        sweep_default=None,
        to="gpu_metrics",
        parse=values.text_or_none,
    ),
    # results and live metrics
    Option(
        "--results-dir",
        "directory under which each run writes its results",
        default="results",
        group="results",
        sweep_default="results",
        to="results_dir",
    ),
    Option(
        "--run-id",
        "name of this run's results subdirectory (default: time-based)",
        group="results",
        sweep_default=None,
        to="run_id",
    ),
    Option(
        "--prometheus-port",
        "serve live Prometheus metrics on this port (0: off)",
        int,
        0,
        group="results",
        to="exporter.port",
    ),
    Option(
        "--prometheus-host",
        "address the metrics endpoint binds (0.0.0.0 in pods)",
        default="127.0.0.1",
        group="results",
        to="exporter.host",
    ),
    Option(
        "--prometheus-linger-s",
        "keep serving metrics this long after the run ends",
        float,
        0.0,
        group="results",
        to="exporter.linger_s",
    ),
    Option(
        "--otlp-endpoint",
        "export one client span per request to this OTLP/HTTP collector (its base URL, or the "
        "full /v1/traces one); its trace is the request's traceparent",
        group="results",
        sweep_default=None,
        to="exporter.otlp_endpoint",
    ),
    Option(
        "--pushgateway-url",
        "push the final metrics snapshot to this Pushgateway",
        group="results",
        to="exporter.pushgateway_url",
    ),
    Option(
        "--pushgateway-delete",
        "delete the pushed group after the linger time",
        bool,
        group="results",
        to="exporter.pushgateway_delete",
    ),
    # the results store every run is recorded in (docs/history.md)
    Option(
        "--history",
        "the results store this run is recorded in: a SQLite file's path, or a team's "
        "postgresql://USER@HOST/DB URL (the postgres extra; default: history.sqlite in "
        "$XDG_DATA_HOME/llmload, else ~/.local/share/llmload)",
        group="history",
        sweep_default=None,
        to="history.path",
        parse=values.text_or_none,
    ),
    Option(
        "--no-history",
        "do not record this run in the results store",
        bool,
        group="history",
        sweep_default=False,
        to="history.enabled",
        parse=values.negate,
    ),
    Option(
        "--label",
        "KEY=VALUE recorded with the run in the results store, e.g. image=vllm:0.9.2 or "
        "hardware=h100 (repeat it, or separate several by commas; hardware is part of the "
        "comparability key)",
        group="history",
        sweep_default=None,
        to="history.labels",
        parse=values.labels,
        repeated=True,
    ),
    # distributed runs
    Option(
        "--report-interval-s",
        "distributed: seconds between a worker's reports",
        float,
        1.0,
        group="fleet",
        to="fleet.report_interval_s",
    ),
    Option(
        "--final-wait-s",
        "distributed: how long the master waits for final reports",
        float,
        30.0,
        group="fleet",
        to="fleet.final_wait_s",
    ),
    # the connection
    Option(
        "--transport",
        "lean (HTTP/1.1 on gevent sockets) or httpx (HTTP/2, proxies)",
        default="lean",
        group="transport",
        to="transport.kind",
    ),
    Option(
        "--connect-timeout",
        "seconds to open a connection",
        float,
        10.0,
        group="transport",
        to="transport.connect_timeout_s",
    ),
    Option(
        "--first-token-timeout",
        "seconds from sending to the first token (0: no limit)",
        float,
        300.0,
        group="transport",
        to="timeouts.first_token_s",
        parse=values.no_limit_if_zero,
    ),
    Option(
        "--stall-timeout",
        "seconds allowed between two reads after the first token (0: no limit)",
        float,
        120.0,
        group="transport",
        to="timeouts.stall_s",
        parse=values.no_limit_if_zero,
    ),
    Option(
        "--request-timeout",
        "seconds for a whole request (0: no limit)",
        float,
        0.0,
        group="transport",
        to="timeouts.total_s",
        parse=values.no_limit_if_zero,
    ),
    Option(
        "--ca-file",
        "CA bundle to verify the target's TLS certificate with",
        group="transport",
        to="transport.ca_file",
    ),
    Option(
        "--insecure",
        "do not verify the target's TLS certificate",
        bool,
        group="transport",
        to="transport.verify",
        parse=values.negate,
    ),
    Option("--http2", "use HTTP/2 (httpx transport only)", bool, group="transport", to="transport.http2"),
    Option("--proxy", "HTTP proxy URL (httpx transport only)", group="transport", to="transport.proxy"),
)

BY_FLAG: Mapping[str, Option] = {o.flag: o for o in OPTIONS}
ENV_NAMES = frozenset(o.env for o in OPTIONS)
# LLMLOAD_* variables that are not options: read by the container entrypoint, not by Locust
ENTRYPOINT_ENV = frozenset({"LLMLOAD_ROLE", "LLMLOAD_MASTER_HOST", "LLMLOAD_MASTER_PORT"})


def add_arguments(
    group: Any,
    options: tuple[Option, ...] = OPTIONS,
    *,
    env: bool = True,
    sweep: bool = False,
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """Declare ``options`` on an argparse (or configargparse, with ``env``) parser or group.

    ``sweep``: the defaults of the llmload commands (``sweep_default`` where an option has one),
    shown in the help, and ``--no-X`` for a switch that is on. ``defaults``: a command's own, by
    flag (the demo's 128 tokens); the help stays the declaration's, whatever the command.
    """
    for option in options:
        default = option.sweep_default if sweep and option.in_sweep else option.default
        default = (defaults or {}).get(option.flag, default)
        text = option.help.replace("%", "%%")  # argparse formats help with %
        if sweep and option.shown_default(default) not in ("", "off"):
            text += f" (default {option.shown_default(default)})"
        kwargs: dict[str, Any] = {"help": text, "default": default}
        kwargs |= {"env_var": option.env} if env else {}
        kwargs |= {"metavar": option.metavar} if option.metavar else {}
        if option.repeated:
            kwargs["action"] = "append"
        elif option.kind is bool:
            kwargs.pop("metavar", None)
            kwargs["default"] = bool(default)
            kwargs["action"] = _BooleanOptional if sweep and default else "store_true"
        else:
            kwargs["type"] = option.kind
            kwargs |= {"choices": option.choices} if option.choices else {}
        added = group.add_argument(option.flag, *option.aliases, **kwargs)
        # Locust's web UI lists the actions that carry this mark (its own parser sets it on
        # arguments added to the parser itself, not to a group)
        added.include_in_web_ui = env and option.on_start_form


def to_argv(values: Any, options: tuple[Option, ...]) -> list[str]:
    """The command-line arguments that give ``options`` the values they have in ``values``."""
    argv: list[str] = []
    for option in options:
        value = getattr(values, option.dest)
        if option.kind is bool:
            argv += [option.flag] if value else []
        elif option.repeated:
            argv += [part for item in value or () for part in (option.flag, str(item))]
        elif value is not None:
            argv += [option.flag, str(value)]
    return argv


def defaults() -> dict[str, Any]:
    """Every option's value when none is given, by its parsed name."""
    return {o.dest: bool(o.default) if o.kind is bool else o.default for o in OPTIONS}


def from_form(given: Any) -> None:
    """Give ``values`` (parsed options) their declared types again after Locust's web UI start
    form set them: it sends every field as text, and leaves text where the default was None
    (an empty field for ``--model``, ``"8"`` for ``--warmup-requests``)."""
    from llmload.errors import ConfigError

    for o in OPTIONS:
        value = getattr(given, o.dest, None)
        if not isinstance(value, str):
            continue
        text = value.strip()
        if not text and o.default is None:
            setattr(given, o.dest, None)
        elif o.kind in (int, float):
            try:
                setattr(given, o.dest, o.kind(text))
            except ValueError:
                kind = getattr(o.kind, "__name__", "")
                raise ConfigError(o.flag, value, f"expected a number ({kind})") from None


def sweep_options() -> tuple[Option, ...]:
    return tuple(o for o in OPTIONS if o.in_sweep)


def groups() -> Iterator[tuple[str, list[Option]]]:
    seen: dict[str, list[Option]] = {}
    for option in OPTIONS:
        seen.setdefault(option.group, []).append(option)
    yield from seen.items()
