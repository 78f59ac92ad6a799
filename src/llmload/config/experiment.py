"""An experiment file for ``llmload tune``: how to start a server, which configurations of it to
try, and the sweep to run against each. Pure: TOML text in, a frozen ``Experiment`` out.

A configuration is a set of parameters; the server's command (or its ``start``/``stop`` hooks)
and URL are templates with ``{name}`` placeholders filled from them. ``tune`` adds ``port`` (a
free port on this machine), ``log`` (the file the server's output goes to), ``dir`` (the
configuration's results directory), ``config`` (the configuration's name) and ``python`` (the
interpreter llmload runs on, for ``{python} -m llmload.sim``), so a template can use those too.
docs/tune.md describes every key.
"""

from __future__ import annotations

import itertools
import re
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from llmload.config.quality import Quality, parse_quality
from llmload.errors import ConfigError

Scalar = str | int | float | bool
ClientValue = Scalar | tuple[Scalar, ...]
Reset = Literal["auto", "off"]
Mode = Literal["sweep", "search"]

RESERVED = ("port", "log", "config")
_READY_TIMEOUT_S = 900.0
_STOP_GRACE_S = 15.0
_URL = "http://127.0.0.1:{port}"  # placeholders tune fills itself
# Options a configuration's sweep may not set: tune owns where it runs and writes.
_TUNE_OWNS = frozenset({"host", "sim", "sim_arg", "results_dir", "run_id", "no_wait", "wait_timeout", "log"})
_NAME = re.compile(r"[^A-Za-z0-9._=+-]+")


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How one configuration's server comes and goes: a ``command`` run as a child process, or
    ``start``/``stop`` hook commands for a server that lives elsewhere (Kubernetes, another
    host), with its ``url``."""

    command: str | None = None
    start: str | None = None
    stop: str | None = None
    url: str = _URL
    ready_timeout_s: float = _READY_TIMEOUT_S
    log_stall_s: float | None = None  # the log unchanged this long while not ready: a hang
    stop_grace_s: float = _STOP_GRACE_S  # SIGTERM, then SIGKILL after this long
    reset_cache: Reset = "auto"


@dataclass(frozen=True, slots=True)
class Configuration:
    name: str
    params: Mapping[str, Scalar]  # every parameter, shared ones included
    varied: tuple[str, ...]  # the parameters that differ between configurations
    client: Mapping[str, ClientValue]  # sweep options: the experiment's, then its own
    mode: Mode = "sweep"  # llmload sweep over its levels, or llmload search for the highest

    @property
    def dirname(self) -> str:
        """The configuration's results directory and run id: its name, safe for a path."""
        return _NAME.sub("_", self.name).strip("_.") or "config"

    def values(self, **tune: str) -> dict[str, str]:
        """What the templates are filled from: its parameters and tune's own."""
        return {**{k: _text(v) for k, v in self.params.items()}, "config": self.name, **tune}


@dataclass(frozen=True, slots=True)
class Experiment:
    name: str
    server: ServerSpec
    configurations: tuple[Configuration, ...]
    directory: Path = field(default=Path("."))  # where the file is: relative paths start there
    quality: Quality | None = None  # None: no [quality] table, no probes


def _text(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def render(template: str, values: Mapping[str, str], where: str) -> str:
    """Fill ``{name}`` from ``values``; an unknown name or a bad brace is the file's error."""
    missing = sorted(placeholders(template) - values.keys()) if "{" in template else []
    if missing:
        known = ", ".join(sorted(values))
        raise ConfigError(where, template, f"no parameter {missing[0]!r} (known: {known})")
    try:
        return template.format_map(values)
    except (ValueError, IndexError, KeyError) as exc:
        raise ConfigError(
            where, template, f"bad placeholder ({exc}); write a literal brace as {{{{ }}}}"
        ) from None


def _table(data: Mapping[str, object], key: str) -> Mapping[str, object]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(key, value, "must be a table")
    return value


def _scalar(value: object, where: str) -> Scalar:
    if isinstance(value, str | int | float | bool):
        return value
    raise ConfigError(where, value, "must be a string, number or boolean")


def _client(data: Mapping[str, object], where: str) -> dict[str, ClientValue]:
    out: dict[str, ClientValue] = {}
    for key, value in data.items():
        name = key.replace("-", "_")
        if name in _TUNE_OWNS:
            raise ConfigError(f"{where}.{key}", value, "tune sets this itself for each configuration")
        if isinstance(value, list):
            out[name] = tuple(_scalar(v, f"{where}.{key}") for v in value)
        else:
            out[name] = _scalar(value, f"{where}.{key}")
    return out


def client_argv(client: Mapping[str, ClientValue]) -> list[str]:
    """Sweep options as command-line arguments: ``levels = [1, 2]`` is ``--levels 1,2``, a true
    boolean is the bare flag, a false one is left out."""
    argv: list[str] = []
    for name, value in client.items():
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            argv += [flag] if value else []
        elif isinstance(value, tuple):
            argv += [flag, ",".join(_text(v) for v in value)]
        else:
            argv += [flag, _text(value)]
    return argv


def _string(data: Mapping[str, object], key: str) -> str | None:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"server.{key}", value, "must be a string")
    return value


def _seconds(data: Mapping[str, object], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(f"server.{key}", value, "must be a number of seconds > 0")
    return float(value)


def _server(data: Mapping[str, object]) -> ServerSpec:
    known = set(ServerSpec.__dataclass_fields__)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"server.{unknown[0]}", data[unknown[0]], f"unknown key (known: {', '.join(sorted(known))})"
        )
    command, start = _string(data, "command"), _string(data, "start")
    if (command is None) == (start is None):
        raise ConfigError(
            "server", dict(data), "give either command (a child process) or start (a hook), not both"
        )
    url = _string(data, "url") or _URL
    if command is None and "{port}" in url:
        raise ConfigError("server.url", url, "a server started by a hook needs its own URL")
    reset = data.get("reset_cache", "auto")
    if reset not in ("auto", "off"):
        raise ConfigError("server.reset_cache", reset, "must be auto or off")
    return ServerSpec(
        command=command,
        start=start,
        stop=_string(data, "stop"),
        url=url,
        ready_timeout_s=_seconds(data, "ready_timeout_s") or _READY_TIMEOUT_S,
        log_stall_s=_seconds(data, "log_stall_s"),
        stop_grace_s=_seconds(data, "stop_grace_s") or _STOP_GRACE_S,
        reset_cache="off" if reset == "off" else "auto",
    )


def _grid(grid: Mapping[str, object]) -> list[tuple[str, dict[str, Scalar]]]:
    axes: list[tuple[str, list[Scalar]]] = []
    for key, values in grid.items():
        listed = values if isinstance(values, list) else [values]
        if not listed:
            raise ConfigError(f"grid.{key}", values, "needs at least one value")
        axes.append((key, [_scalar(v, f"grid.{key}") for v in listed]))
    combos = itertools.product(*(values for _, values in axes))
    varied = [key for key, values in axes if len(values) > 1] or [key for key, _ in axes]
    out = []
    for combo in combos:
        params = dict(zip((key for key, _ in axes), combo, strict=True))
        out.append((",".join(f"{k}={_text(params[k])}" for k in varied), params))
    return out


def _named(configs: object) -> list[tuple[str, dict[str, Scalar], Mapping[str, object]]]:
    if not isinstance(configs, list) or not configs:
        raise ConfigError("configs", configs, "must be a list of tables ([[configs]])")
    out = []
    for i, item in enumerate(configs):
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ConfigError(f"configs[{i}]", item, "each configuration needs a name")
        extra = sorted(set(item) - {"name", "params", "client"})
        if extra:
            raise ConfigError(
                f"configs[{i}].{extra[0]}", item[extra[0]], "unknown key (known: name, params, client)"
            )
        params = {k: _scalar(v, f"configs[{i}].params.{k}") for k, v in _table(item, "params").items()}
        out.append((str(item["name"]), params, _table(item, "client")))
    return out


def _configuration(
    name: str, params: dict[str, Scalar], varied: tuple[str, ...], client: dict[str, ClientValue]
) -> Configuration:
    mode = client.pop("mode", "sweep")
    if mode not in ("sweep", "search"):
        raise ConfigError("client.mode", mode, f"must be sweep or search (in {name})")
    return Configuration(name, params, varied, client, "search" if mode == "search" else "sweep")


def parse_experiment(
    data: Mapping[str, object],
    *,
    name: str,
    directory: Path = Path("."),
    overrides: Mapping[str, str] | None = None,
) -> Experiment:
    """The experiment a parsed TOML document describes; ``overrides`` (``--set k=v``) replace
    shared parameters."""
    tables = ("name", "server", "params", "grid", "configs", "client", "quality")
    unknown = sorted(set(data) - set(tables))
    if unknown:
        raise ConfigError(unknown[0], data[unknown[0]], f"unknown key (known: {', '.join(tables)})")
    server = _server(_table(data, "server"))
    shared: dict[str, Scalar] = {k: _scalar(v, f"params.{k}") for k, v in _table(data, "params").items()}
    shared.update(overrides or {})
    for key in [*shared, *_table(data, "grid")]:
        if key in RESERVED:
            raise ConfigError(
                f"params.{key}", shared.get(key), f"{', '.join(RESERVED)} are tune's own placeholders"
            )
    client = _client(_table(data, "client"), "client")
    if ("grid" in data) == ("configs" in data):
        raise ConfigError(
            "grid", data.get("grid"), "give the configurations as [grid] or as [[configs]], one of them"
        )
    if "grid" in data:
        none: Mapping[str, object] = {}
        rows = [(label, params, none) for label, params in _grid(_table(data, "grid"))]
    else:
        rows = _named(data["configs"])
    all_params = [{**shared, **params} for _, params, _ in rows]
    varied = tuple(
        sorted(
            {
                k
                for p in all_params
                for k in p
                if len({_text(q[k]) if k in q else None for q in all_params}) > 1
            }
        )
    )
    configurations = tuple(
        _configuration(label, params, varied, {**client, **_client(own, f"configs.{label}.client")})
        for (label, _, own), params in zip(rows, all_params, strict=True)
    )
    seen: set[str] = set()
    for c in configurations:
        if c.dirname in seen:
            raise ConfigError("configs", c.name, "two configurations share this name")
        seen.add(c.dirname)
    quality = parse_quality(_table(data, "quality"), directory) if "quality" in data else None
    experiment = Experiment(str(data.get("name") or name), server, configurations, directory, quality)
    check_templates(experiment)
    return experiment


def check_templates(experiment: Experiment) -> None:
    """Every template fills for every configuration, before any server starts."""
    s = experiment.server
    for c in experiment.configurations:
        values = c.values(port="0", log="server.log", dir=".", python="python")
        for key in ("command", "start", "stop", "url"):
            template = getattr(s, key)
            if template is not None:
                render(template, values, f"server.{key}")


def parse_overrides(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError("--set", pair, "expected NAME=VALUE")
        out[key.strip()] = value
    return out


def load_experiment(path: Path, overrides: Mapping[str, str] | None = None) -> Experiment:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("EXPERIMENT", str(path), f"cannot read it: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("EXPERIMENT", str(path), f"not valid TOML: {exc}") from None
    return parse_experiment(data, name=path.stem, directory=path.parent, overrides=overrides)
