"""``llmload tune``'s quality guard, per configuration: its probes asked alone before the sweep
and again under its heaviest stage (``probes.json``), and the drift read back from those files.

The drift of a configuration is twofold: its answers under load against its own answers alone
(does batching change them?) and its answers alone against the first configuration's (does the
setting change them?). Neither changes a verdict unless ``max_answer_drift`` is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.config.experiment import Experiment
from llmload.config.quality import Quality
from llmload.protocol.jsonvalue import JSON
from llmload.results.drift import Drift, drift
from llmload.target.models import first_model
from llmload.target.probes import Answers, UnderLoad, ask

PROBES = "probes.json"
_LAST_PROBE_S = 60.0  # how long the probe in flight when the sweep ends may take to finish


@dataclass(frozen=True, slots=True)
class Drifts:
    under_load: Drift | None  # against the same configuration alone
    against_first: Drift | None  # alone, against the first configuration alone
    disqualified: str = ""  # why --max-answer-drift rules it out; "" when it does not


class Guard:
    """One configuration's probes: ``alone`` first, then ``loaded`` around its sweep."""

    def __init__(
        self, quality: Quality, url: str, headers: dict[str, str], *, model: str | None, api_key: str | None
    ) -> None:
        self._quality = quality
        self._url = url
        self._headers = headers
        self._model = model or first_model(url, api_key=api_key)
        self._alone: Answers | None = None
        self._loaded: UnderLoad | None = None
        self._level = 0

    def _ask(self, stopped: Callable[[], bool] = lambda: False) -> Answers:
        q = self._quality
        return ask(
            self._url,
            q.probes,
            model=self._model,
            max_tokens=q.max_tokens,
            headers=self._headers,
            stopped=stopped,
        )

    def alone(self) -> Answers:
        self._alone = self._ask()
        return self._alone

    def loaded(self, metrics_url: str, level: int) -> None:
        self._level = level
        self._loaded = UnderLoad(metrics_url, level, self._ask)

    def write(self, cdir: Path) -> Answers | None:
        """Ends the probes under load and writes ``probes.json``; returns what was answered."""
        loaded = self._loaded.finish(_LAST_PROBE_S) if self._loaded else None
        alone = self._alone
        record: dict[str, JSON] = {
            "model": self._model,
            "max_tokens": self._quality.max_tokens,
            "prompts": list(self._quality.probes),
            "alone": None if alone is None else list(alone.texts),
            "under_load": None if loaded is None else list(loaded.texts),
            "under_load_concurrency": self._level or None,
            "errors": [*(alone.errors if alone else ()), *(loaded.errors if loaded else ())],
        }
        (cdir / PROBES).write_bytes(orjson.dumps(record, option=orjson.OPT_INDENT_2) + b"\n")
        return loaded


def _texts(record: Mapping[str, JSON], key: str) -> list[str | None] | None:
    given = record.get(key)
    if not isinstance(given, list):
        return None
    return [t if isinstance(t, str) else None for t in given]


def read_object(path: Path) -> dict[str, JSON]:
    """A JSON object file of tune's; {} when it is missing or torn (a cut run's)."""
    try:
        value = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def drifts(experiment: Experiment, out: Path) -> dict[str, Drifts]:
    """Each configuration's drift, from the ``probes.json`` files under ``out``."""
    quality = experiment.quality
    if quality is None:
        return {}
    records = {c.name: read_object(out / c.dirname / PROBES) for c in experiment.configurations}
    first = records[experiment.configurations[0].name]
    reference = _texts(first, "alone")
    found = {}
    for c in experiment.configurations:
        record = records[c.name]
        alone, loaded = _texts(record, "alone"), _texts(record, "under_load")
        prompts = [p or "" for p in _texts(record, "prompts") or quality.probes]
        own = drift(prompts, loaded, alone) if loaded is not None and alone is not None else None
        other = None
        if c is not experiment.configurations[0] and alone is not None and reference is not None:
            other = drift(prompts, alone, reference)
        found[c.name] = Drifts(own, other, _judge(quality, (own, other)))
    return found


def _judge(quality: Quality, measured: Sequence[Drift | None]) -> str:
    limit = quality.max_answer_drift
    if limit is None:
        return ""
    for what, d in zip(("under load", "against the first configuration"), measured, strict=True):
        if d is not None and d.share is not None and d.share > limit:
            return f"answers drifted {what}: {d.text()} > {limit:.0%} (--max-answer-drift)"
    return ""
