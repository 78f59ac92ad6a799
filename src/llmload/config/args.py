"""Locust's parsed options → the run's ``RunConfig``, read off the option table.

Each option names the field it sets (``llmload.config.options``), so this step is one loop over
the table plus what no single option gives: the host, the longest prompt and output a length
distribution can draw, the API key (from the variable ``--api-key-env`` names), the pool size.
The checks live with the typed config each value lands in, so they run once, and an error names
the flag the user gave even when a section names its field. Imports no locust: it runs (and is
tested) in a plain process.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from dataclasses import is_dataclass
from typing import Any, TypeVar, get_type_hints

from llmload.config.apikey import read_api_key
from llmload.config.options import OPTIONS, add_arguments, from_form
from llmload.config.settings import RunConfig
from llmload.errors import ConfigError
from llmload.workload.lengths import Fixed, Length
from llmload.workload.replay import Replay
from llmload.workload.traces import load_trace

T = TypeVar("T")

# The RunConfig fields no option sets, and where their values come from.
DERIVED: Mapping[str, str] = {
    "host": "--host (Locust's), or the master's spawn message on a worker",
    "scenario": "the locustfile's user classes",
    "request.endpoint": "the user class: chat, completions or embeddings",
    "request.api_key": "the environment variable named by --api-key-env, never a flag",
    "workload.prompt_tokens": "the longest prompt --prompt-tokens can draw",
    "workload.max_tokens": "the longest output --max-tokens can draw",
    "transport.base_url": "--host",
    "transport.pool_size": "-u/--users (a worker, which does not know the fleet's, sizes it generously)",
}
# Who set a field, for errors that name the field: the flag the user typed.
FLAG_OF: Mapping[str, str] = {
    **{path: o.flag for o in OPTIONS for path in o.fields},
    "transport.base_url": "--host",
    "transport.pool_size": "--users",
}


def add_options(parser: Any) -> None:
    """Register llmload's options on Locust's (configargparse) parser."""
    add_arguments(parser.add_argument_group("llmload"))


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


def _put(tree: dict[str, Any], path: str, value: object) -> None:
    *branches, leaf = path.split(".")
    for name in branches:
        tree = tree.setdefault(name, {})
    tree[leaf] = value


def build(cls: type[T], given: Mapping[str, Any], prefix: str = "") -> T:
    """``cls`` from a tree of field values, nested dataclasses from their own subtrees."""
    hints = get_type_hints(cls)
    fields = {}
    for name, value in given.items():
        hint = hints[name]
        nested = isinstance(value, dict) and isinstance(hint, type) and is_dataclass(hint)
        fields[name] = build(hint, value, f"{prefix}{name}.") if nested else value
    try:
        return cls(**fields)
    except ConfigError as exc:
        flag = FLAG_OF.get(f"{prefix}{exc.option}")
        if flag is None:
            raise
        raise ConfigError(flag, exc.value, exc.problem) from None


def _lengths(workload: dict[str, Any]) -> None:
    """A fixed length is the plain field; a distribution also sets the largest it draws."""
    for plain, drawn in (("prompt_tokens", "prompt_lengths"), ("max_tokens", "output_lengths")):
        length: Length = workload[drawn]
        workload[plain] = length.upper
        workload[drawn] = None if isinstance(length, Fixed) else length


def _check_trace(config: RunConfig) -> None:
    """The replay's settings, checked against the file itself (read once here, at start-up)."""
    path, scenario = config.trace.path, config.scenario
    if path is None:
        if scenario == "trace":
            raise ConfigError("--trace", None, "the trace scenario replays a file: give --trace FILE")
        return
    if scenario != "trace":
        problem = 'replaying a trace needs the trace scenario: locust -f "$(llmload scenarios trace)"'
        raise ConfigError("--trace", path, problem)
    if config.phases.warmup_requests:
        problem = (
            "a replay has no warm-up requests: the trace starts with the measured window "
            "(skip the trace's start with --trace-window)"
        )
        raise ConfigError("--warmup-requests", config.phases.warmup_requests, problem)
    if config.phases.window_requests is not None:
        problem = "a replay measures the trace's requests: cut it with --trace-window instead"
        raise ConfigError("--requests", config.phases.window_requests, problem)
    Replay.of(load_trace(path, config.trace.format), config.trace.replay)  # its errors now, not mid-run


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
    tree: dict[str, Any] = {"host": host, "scenario": scenario}
    for option in OPTIONS:
        value = getattr(opts, option.dest)
        if option.parse is not None:
            value = option.parse(value, opts)
        for path, part in zip(option.fields, value if len(option.fields) > 1 else (value,), strict=True):
            _put(tree, path, part)
    _lengths(tree["workload"])
    tree["request"]["api_key"] = read_api_key(opts.api_key_env, os.environ)
    tree["transport"]["base_url"] = host.rstrip("/")
    tree["transport"]["pool_size"] = max(getattr(opts, "num_users", None) or 1024, 1)
    config = build(RunConfig, tree)
    _check_trace(config)
    return config
