"""Which runs may be judged against each other: the comparability key (docs/history.md).

Two runs are comparable when they asked the same of the same model on the same hardware: the
workload (scenario, prompt and output lengths, ignore-eos, API, streaming) and the target (the
model, and the hardware the ``hardware`` label names). The key keeps those fields in words, so a
history can say which ones differ, and a short hash of them, so a trend can be named on the
command line. Everything else a run records (the engine, its version and flags, the image) is
what a trend is *about*, so it is no part of the key.

Read from ``summary.json`` alone: a key computed when the run ended and one recomputed by
``llmload history reindex`` are the same.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

import orjson

from llmload.protocol.jsonvalue import JSON, JSONObject
from llmload.results.summary import Summary

HARDWARE_LABEL = "hardware"
_HASH_CHARS = 12  # 48 bits: no two keys of one store collide in practice, and it fits a column


@dataclass(frozen=True, slots=True, kw_only=True)
class ComparabilityKey:
    scenario: str | None
    prompt_tokens: str | None  # "128", "uniform:64:256", "dataset:sharegpt.json"
    output_tokens: str | None  # "256", "256~0.1" (jittered), "lognormal:128:0.5:4096"
    ignore_eos: bool | None
    api: str | None  # the endpoint the requests went to: chat, completions, responses, ...
    stream: bool | None
    model: str | None
    hardware: str | None  # the run's hardware label, if it had one

    @property
    def hash(self) -> str:
        """A short, stable name of the key: the same fields give the same hash in any version
        that keeps these fields and their order."""
        canonical = orjson.dumps(asdict(self), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(canonical).hexdigest()[:_HASH_CHARS]

    def describe(self) -> str:
        """The fields in words, as a table's group header shows them."""
        parts = [
            self.scenario or "?",
            f"prompt {self.prompt_tokens or '?'}",
            f"output {self.output_tokens or '?'}",
            _switch("ignore-eos", self.ignore_eos),
            self.api or "?",
            _switch("stream", self.stream),
            self.model or "?",
        ]
        return " · ".join([*parts, f"hardware {self.hardware}"] if self.hardware else parts)


@dataclass(frozen=True, slots=True)
class Difference:
    field: str
    first: str | bool | None
    second: str | bool | None

    def describe(self) -> str:
        return f"{self.field}: {_text(self.first)} → {_text(self.second)}"


def differing(first: ComparabilityKey, second: ComparabilityKey) -> tuple[Difference, ...]:
    """The fields in which two keys differ, in the key's order: what makes two runs not
    comparable, said instead of comparing them."""
    return tuple(
        Difference(f.name, getattr(first, f.name), getattr(second, f.name))
        for f in fields(ComparabilityKey)
        if getattr(first, f.name) != getattr(second, f.name)
    )


def key_of(summary: Summary, labels: Mapping[str, str]) -> ComparabilityKey:
    """The run's key from its summary and the labels it is recorded with."""
    options = summary.run.options
    request = _section(options, "request")
    workload = _section(options, "workload")
    return ComparabilityKey(
        scenario=summary.run.scenario,
        prompt_tokens=_prompt(workload),
        # summary.json version 1 kept max_tokens at the top of the options
        output_tokens=_output(workload) or _length_text(options.get("max_tokens")),
        ignore_eos=_flag(request.get("ignore_eos", options.get("ignore_eos"))),
        api=_api(request),
        stream=_flag(request.get("stream", options.get("stream"))),
        model=summary.run.model,
        hardware=labels.get(HARDWARE_LABEL),
    )


def _section(options: Mapping[str, JSON], name: str) -> JSONObject:
    value = options.get(name)
    return value if isinstance(value, Mapping) else {}


def _flag(value: JSON) -> bool | None:
    return value if isinstance(value, bool) else None


def _api(request: JSONObject) -> str | None:
    """What ``RequestConfig.api_for`` sent the chat users to: --api replaces chat only."""
    endpoint, api = request.get("endpoint"), request.get("api")
    if not isinstance(endpoint, str):
        return None
    return api if isinstance(api, str) and api != "auto" and endpoint == "chat" else endpoint


def _prompt(workload: JSONObject) -> str | None:
    dataset = workload.get("dataset")
    if isinstance(dataset, str) and dataset:  # the file's name: the same data in another directory
        return "dataset:" + dataset.replace("\\", "/").rsplit("/", 1)[-1]
    return _distribution(workload.get("prompt_lengths")) or _length_text(workload.get("prompt_tokens"))


def _output(workload: JSONObject) -> str | None:
    drawn = _distribution(workload.get("output_lengths"))
    if drawn is not None:
        return drawn
    fixed = _length_text(workload.get("max_tokens"))
    jitter = workload.get("output_jitter")
    if fixed is not None and isinstance(jitter, int | float) and jitter:
        return f"{fixed}~{jitter:g}"
    return fixed


def _distribution(value: JSON) -> str | None:
    """A length distribution as its ``--max-tokens`` spec: ``uniform:64:256``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("kind"), str):
        return None
    params = [_number_text(v) for k, v in value.items() if k != "kind"]
    return ":".join([str(value["kind"]), *params])


def _length_text(value: JSON) -> str | None:
    return None if value is None or isinstance(value, bool) else _number_text(value)


def _number_text(value: JSON) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _switch(name: str, on: bool | None) -> str:
    return f"{name} ?" if on is None else name if on else f"no {name}"


def _text(value: str | bool | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return value
