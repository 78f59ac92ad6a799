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
from collections.abc import Iterator, Mapping
from typing import Any

from llmload.config import values
from llmload.config.option import Option, choices_of, field_type
from llmload.config.options_load import LOAD_OPTIONS
from llmload.config.options_workload import WORKLOAD_OPTIONS

__all__ = ["OPTIONS", "Option", "choices_of", "field_type"]

OPTIONS: tuple[Option, ...] = (
    *WORKLOAD_OPTIONS,
    *LOAD_OPTIONS,
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
        "the results store runs are recorded in and llmload history and gate read: a SQLite "
        "file's path, or a team's "
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
        "KEY=VALUE recorded with the run (llmload history reindex: with each run) in the results "
        "store, e.g. image=vllm:0.9.2 or "
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
        text = option.help
        if sweep and option.shown_default(default) not in ("", "off"):
            text += f" (default {option.shown_default(default)})"
        kwargs = option.argparse_kwargs(default, text)
        kwargs |= {"env_var": option.env} if env else {}
        if option.kind is bool and sweep and default and not option.repeated:
            kwargs["action"] = _BooleanOptional
        added = group.add_argument(option.flag, *option.aliases, **kwargs)
        # Locust's web UI lists the actions that carry this mark (its own parser sets it on
        # arguments added to the parser itself, not to a group)
        added.include_in_web_ui = env and option.on_start_form


def to_argv(values: Mapping[str, object], options: tuple[Option, ...]) -> list[str]:
    """The command-line arguments that give ``options`` the values ``values`` has for them (by
    their parsed names)."""
    argv: list[str] = []
    for option in options:
        value = values[option.dest]
        if option.kind is bool:
            argv += [option.flag] if value else []
        elif option.repeated:
            for item in value if isinstance(value, list | tuple) else ():
                argv += [option.flag, str(item)]
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
