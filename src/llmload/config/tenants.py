"""Tenants: a weighted mix of clients sharing one server, each with its own model or LoRA
adapter, headers, lengths and SLOs (``--tenants FILE``).

A gateway in front of an inference server sees several tenants at once: a chat product, a
batch summariser on a LoRA adapter, an agent platform. Each request of the built-in chat users
draws its tenant by weight (seeded per request, so the mix is the same on one process or many)
and goes out as that tenant's: its ``model`` (a LoRA adapter is served under its own model
name), its headers, its ``prompt_tokens`` and ``max_tokens``, and its name on the request
(``tenant:<name>``), which gives it its own line in the summary, the console, the report and
Locust's table. Its ``slo`` judges its own requests for goodput, and fairness compares the
tenants' goodput shares with their weights.

The file is TOML, one table per tenant::

    [tenants.chat]
    weight = 3
    model = "llama-3-8b"
    headers = { "X-Tenant" = "chat" }
    max_tokens = 128
    slo = "ttft_p99_ms<=500"

    [tenants.summarise]
    weight = 1
    model = "lora-summarise"
    prompt_tokens = 2000
    max_tokens = 256
"""

from __future__ import annotations

import tomllib
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from llmload.errors import ConfigError
from llmload.metrics.slo import SloRule, parse_slo
from llmload.workload.words import draw, seed_key, unit

OPTION = "--tenants"
MAX_TENANTS = 32  # each is a label value in every stage: bounded
_TENANT_STREAM = 7  # the seed's stream for the tenant draw: independent of every other draw
_KEYS = frozenset({"weight", "model", "headers", "prompt_tokens", "max_tokens", "slo"})


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    weight: float
    model: str | None = None  # None: the run's model
    headers: tuple[tuple[str, str], ...] = ()
    prompt_tokens: int | None = None  # None: the run's --prompt-tokens
    max_tokens: int | None = None
    slo: tuple[SloRule, ...] = ()  # None of its own: the run's --slo

    @property
    def request_name(self) -> str:
        return f"tenant:{self.name}"


def pick(tenants: Sequence[Tenant], seed: int, user_index: int, request_index: int) -> Tenant:
    """This request's tenant, drawn by weight."""
    bounds = list(accumulate(t.weight for t in tenants))
    x = unit(draw(seed_key(seed, _TENANT_STREAM), user_index, request_index)) * bounds[-1]
    return tenants[min(bisect_right(bounds, x), len(tenants) - 1)]


def load_tenants(value: object) -> tuple[Tenant, ...]:
    """``--tenants FILE``: the mix, checked whole before any load; an empty value is none."""
    text = str(value or "").strip()
    if not text:
        return ()
    path = Path(text)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(OPTION, text, f"cannot read it: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(OPTION, text, f"not TOML: {exc}") from None
    tables = data.get("tenants")
    if not isinstance(tables, Mapping) or not tables:
        raise ConfigError(OPTION, text, "no [tenants.NAME] table: see docs/workloads.md#tenants")
    if len(tables) > MAX_TENANTS:
        raise ConfigError(OPTION, text, f"{len(tables)} tenants: at most {MAX_TENANTS}")
    return tuple(_tenant(str(name), table, text) for name, table in tables.items())


def _tenant(name: str, table: object, path: str) -> Tenant:
    where = f"{path}: [tenants.{name}]"
    if not isinstance(table, Mapping):
        raise ConfigError(OPTION, where, "must be a table")
    unknown = set(table) - _KEYS
    if unknown:
        raise ConfigError(OPTION, where, f"unknown keys {sorted(unknown)}; known: {sorted(_KEYS)}")
    weight = table.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or not 0 < weight < float("inf"):
        raise ConfigError(OPTION, where, "weight must be a number above 0")
    headers = table.get("headers", {})
    if not isinstance(headers, Mapping) or not all(isinstance(v, str) for v in headers.values()):
        raise ConfigError(OPTION, where, 'headers must be a table of strings, e.g. { "X-Tenant" = "a" }')
    model = table.get("model")
    if model is not None and (not isinstance(model, str) or not model):
        raise ConfigError(OPTION, where, "model must be a model or adapter name")
    lengths = {key: table.get(key) for key in ("prompt_tokens", "max_tokens")}
    for key, n in lengths.items():
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ConfigError(OPTION, where, f"{key} must be a whole number of tokens, 1 or more")
    slo_text = table.get("slo", "")
    if not isinstance(slo_text, str):
        raise ConfigError(OPTION, where, "slo must be a string in --slo's form, e.g. 'ttft_p99_ms<=500'")
    return Tenant(
        name=name,
        weight=float(weight),
        model=model,
        headers=tuple((str(k), v) for k, v in headers.items()),
        prompt_tokens=lengths["prompt_tokens"],
        max_tokens=lengths["max_tokens"],
        slo=parse_slo(slo_text) if slo_text else (),
    )
