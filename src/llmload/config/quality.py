"""The quality guard of an experiment (its ``[quality]`` table): a fixed set of probe prompts,
answered at temperature 0 once alone and again under the heaviest load, so a faster setting
that changes answers (quantization, a drafter, batch-size-dependent kernels) shows it. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from llmload.errors import ConfigError

# Short prompts with one right answer each, so greedy decoding has little room to wander and a
# difference means the numbers changed, not the model's mood.
DEFAULT_PROBES: tuple[str, ...] = (
    "What is the capital of France? Answer in one sentence.",
    "Compute 17 * 23 and show the steps.",
    "List the first eight prime numbers.",
    "Translate 'The cat sleeps on the warm windowsill.' into German.",
    "Write a Python function that returns the factorial of n.",
    "Name the planets of the solar system in order from the Sun.",
)
_MAX_TOKENS = 32
_KNOWN = ("probes", "probes_file", "max_tokens", "max_answer_drift")


@dataclass(frozen=True, slots=True)
class Quality:
    probes: tuple[str, ...] = DEFAULT_PROBES
    max_tokens: int = _MAX_TOKENS
    max_answer_drift: float | None = None  # set: a configuration past it is not recommended


def drift_limit(value: object, where: str) -> float:
    """A share of answers in [0, 1]; ``10%`` is accepted too."""
    text = str(value).strip()
    try:
        share = float(text.removesuffix("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise ConfigError(where, value, "give a share of answers such as 0.1 or 10%") from None
    if not 0.0 <= share <= 1.0:
        raise ConfigError(where, value, "must be between 0 and 1 (or 0% and 100%)")
    return share


def _probes(data: Mapping[str, object], directory: Path) -> tuple[str, ...]:
    if "probes" in data and "probes_file" in data:
        raise ConfigError("quality.probes", data["probes"], "give probes or probes_file, not both")
    if "probes_file" in data:
        path = directory / str(data["probes_file"])
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError("quality.probes_file", str(path), f"cannot read it: {exc.strerror}") from None
        probes = tuple(line.strip() for line in lines if line.strip())
    else:
        given = data.get("probes", list(DEFAULT_PROBES))
        if not isinstance(given, list) or not all(isinstance(p, str) and p.strip() for p in given):
            raise ConfigError("quality.probes", given, "must be a list of prompts (strings)")
        probes = tuple(given)
    if not probes:
        raise ConfigError("quality.probes", [], "needs at least one prompt")
    return probes


def parse_quality(data: Mapping[str, object], directory: Path) -> Quality:
    unknown = sorted(set(data) - set(_KNOWN))
    if unknown:
        raise ConfigError(
            f"quality.{unknown[0]}", data[unknown[0]], f"unknown key (known: {', '.join(_KNOWN)})"
        )
    max_tokens = data.get("max_tokens", _MAX_TOKENS)
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ConfigError("quality.max_tokens", max_tokens, "must be an integer >= 1")
    limit = data.get("max_answer_drift")
    return Quality(
        _probes(data, directory),
        max_tokens,
        None if limit is None else drift_limit(limit, "quality.max_answer_drift"),
    )
