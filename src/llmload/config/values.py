"""The option values that need more than a type: each parser takes the value argparse produced
(text for most) and the whole parsed namespace (a length's cap is another option), and raises
``ConfigError`` naming the flag the user typed. The option table names one per option.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from types import MappingProxyType

import orjson

from llmload.config.tenants import Tenant, load_tenants
from llmload.errors import ConfigError
from llmload.metrics.slo import SloRule, parse_max_error_rate, parse_slo
from llmload.workload.agent_trace import load_agent_trace
from llmload.workload.cancel import parse_after
from llmload.workload.images import parse_sizes
from llmload.workload.lengths import Length, parse_length_spec
from llmload.workload.ramps import Ramp, parse_ramp
from llmload.workload.replay import parse_window

# A parser: (the value as argparse gave it, every parsed option) -> the typed config's value.
Parse = Callable[[object, argparse.Namespace], object]


def negate(value: object, _given: argparse.Namespace) -> bool:
    """A ``--no-X`` (or ``--insecure``) switch sets a field that says the positive."""
    return not value


def text_or_none(value: object, _given: argparse.Namespace) -> str | None:
    return str(value) if value else None


def text_or_empty(value: object, _given: argparse.Namespace) -> str:
    return str(value) if value else ""


def no_limit_if_zero(value: object, _given: argparse.Namespace) -> float | None:
    """Timeouts: 0 on the command line means no limit, which the config spells None."""
    seconds = float(str(value))
    return seconds or None


def existing_file(value: object, _given: argparse.Namespace) -> str | None:
    if value is None:
        return None
    if not os.path.isfile(str(value)):
        raise ConfigError("--dataset", value, "no such file")
    return str(value)


def tokenize(value: object, given: argparse.Namespace) -> str:
    """``auto`` is ``off`` where nothing synthetic is built to length (a dataset, shared
    prefixes, a trace): the run asks the server nothing."""
    text = str(value)
    if text not in ("auto", "off", "server") and not os.path.isfile(text):
        raise ConfigError("--tokenize", text, "give auto, off, server, or the path of a tokenizer.json")
    if text == "auto" and any(
        getattr(given, name, None) for name in ("dataset", "prefix_groups", "trace", "tenants")
    ):
        return "off"
    return text


def prompt_lengths(value: object, given: argparse.Namespace) -> Length:
    return parse_length_spec("--prompt-tokens", str(value), cap=given.max_length)


def output_lengths(value: object, given: argparse.Namespace) -> Length:
    return parse_length_spec("--max-tokens", str(value), cap=given.max_length)


def extra_body(value: object, _given: argparse.Namespace) -> Mapping[str, object]:
    if not value:
        return MappingProxyType({})
    try:
        parsed = orjson.loads(str(value))
    except orjson.JSONDecodeError as exc:
        raise ConfigError("--extra-body", value, f"not valid JSON ({exc})") from None
    if not isinstance(parsed, dict):
        raise ConfigError("--extra-body", value, "must be a JSON object like '{\"temperature\": 0}'")
    return MappingProxyType(parsed)


def extra_headers(value: object, _given: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    headers = []
    for item in str(value or "").split(";"):
        if not item.strip():
            continue
        name, sep, text = item.partition(":")
        if not sep or not name.strip():
            raise ConfigError("--extra-header", value, "use 'Name: value; Other: value'")
        headers.append((name.strip(), text.strip()))
    return tuple(headers)


def header_names(value: object, _given: argparse.Namespace) -> tuple[str, ...]:
    """Comma-separated header names; ``none`` (or nothing) for none."""
    text = str(value or "").strip()
    if text.lower() in ("", "none"):
        return ()
    names = tuple(name.strip() for name in text.split(","))
    for name in names:
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise ConfigError(
                "--session-header", value, "use header names like 'X-Session-ID,X-Route-Key', or none"
            )
    return names


def agent_trace(value: object, _given: argparse.Namespace) -> str | None:
    """The file's path, once every line of it has been read and checked."""
    path = str(value or "").strip()
    if not path:
        return None
    load_agent_trace(path)
    return path


def tenants(value: object, _given: argparse.Namespace) -> tuple[Tenant, ...]:
    return load_tenants(value)


def cancel_after(value: object, _given: argparse.Namespace) -> tuple[float, float]:
    return parse_after(str(value))


def levels(value: object, _given: argparse.Namespace) -> tuple[int, ...]:
    text = str(value)
    try:
        parsed = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError("--levels", text, "give comma-separated integers, e.g. 1,2,4,8") from None
    if not parsed or min(parsed) < 1:
        raise ConfigError("--levels", text, "give at least one level, each >= 1")
    return parsed


def stages(value: object, _given: argparse.Namespace) -> tuple[int, ...]:
    text = str(value or "")
    try:
        parsed = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError(
            "--server-profile", text, "give stage numbers, comma-separated, e.g. 0 or 2,3"
        ) from None
    if parsed and min(parsed) < 0:
        raise ConfigError("--server-profile", text, "stages are numbered from 0")
    return parsed


def rates(value: object, _given: argparse.Namespace) -> tuple[float, ...]:
    if not value:
        return ()
    text = str(value)
    try:
        parsed = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise ConfigError("--rates", text, "give comma-separated numbers, e.g. 1,2,5,10") from None
    if not parsed or min(parsed) <= 0:
        raise ConfigError("--rates", text, "give at least one rate, each > 0")
    return parsed


def ramp(value: object, _given: argparse.Namespace) -> Ramp | None:
    return parse_ramp(None if value is None else str(value))


def image_sizes(value: object, _given: argparse.Namespace) -> tuple[tuple[int, int], ...]:
    return parse_sizes(str(value))


def trace_window(value: object, _given: argparse.Namespace) -> tuple[float, float | None]:
    return parse_window(None if value is None else str(value))


def slo(value: object, _given: argparse.Namespace) -> tuple[SloRule, ...]:
    return parse_slo(None if value is None else str(value))


def max_error_rate(value: object, _given: argparse.Namespace) -> float | None:
    return parse_max_error_rate(value if value is None or isinstance(value, float) else str(value))


_LABEL_KEY = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def labels(value: object, _given: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """``--label KEY=VALUE``, repeated, or several comma-separated in one (how the environment
    variable gives more than one): the pairs in the order given, each key once."""
    items = value if isinstance(value, list | tuple) else [] if value is None else [value]
    pairs: dict[str, str] = {}
    for item in items:
        for part in str(item).split(","):
            if not part.strip():
                continue
            key, sep, text = (s.strip() for s in part.partition("="))
            if not sep or not key or not text or not set(key) <= _LABEL_KEY:
                raise ConfigError(
                    "--label", part, "give KEY=VALUE, e.g. image=vllm:0.9.2 (a key of letters, digits, _ . -)"
                )
            if pairs.get(key, text) != text:
                raise ConfigError("--label", part, f"{key} is already labelled {pairs[key]!r}")
            pairs[key] = text
    return tuple(pairs.items())
