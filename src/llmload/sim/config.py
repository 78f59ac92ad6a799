"""The simulator's settings, built once from the command line and frozen."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from llmload.sim.faults import FaultPolicy
from llmload.sim.model import FixedTiming, ModelParams
from llmload.sim.profiles import Profile
from llmload.sim.router import SESSION_HEADER, RouterPolicy


@dataclass(frozen=True, slots=True)
class SimConfig:
    host: str
    port: int
    profile: Profile
    params: ModelParams  # the profile's solved parameters with any flags applied
    timing: FixedTiming | None  # set: fixed timing instead of the batching model
    model: str
    seed: int = 0
    emit_timestamps: bool = False
    request_log: Path | None = None
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    startup_delay_s: float = 0.0
    hang: bool = False
    log_file: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    realtime: bool = False
    dcgm: bool = False  # /metrics also carries DCGM exporter gauges of a simulated GPU (sim/gpu.py)
    reasoning_tokens: int = 0  # each chat answer thinks this many tokens first (reasoning_content)
    tokens_per_word: Fraction = Fraction(1)  # prompt tokens per word (tokens.split_words)
    # vLLM's --enable-per-request-metrics: answers carry their timing (generation.py's metrics)
    per_request_metrics: bool = False
    tokenize_route: bool = True  # POST /tokenize; off: 404, as an OpenAI gateway answers
    adapters: tuple[str, ...] = ()  # served model names after ``model``: LoRA adapters on it
    adapter_switch_ns: int = 0  # a step that loads an adapter is this much longer per adapter
    replicas: int = 1  # independent engines behind the router (``replicas.py``)
    router: RouterPolicy = "round-robin"
    session_header: str = SESSION_HEADER  # lower case, as ``http.py`` keys request headers
    # vLLM's --api-key: the /v1 routes want it as a bearer token (api.py); never shown
    api_key: str | None = field(default=None, repr=False)

    @property
    def served_models(self) -> tuple[str, ...]:
        """Every served model name, the default (base) model first."""
        return (self.model, *self.adapters)

    @property
    def scheme(self) -> str:
        return "https" if self.certfile is not None else "http"

    @property
    def tokens_per_chunk(self) -> int:
        return self.timing.tokens_per_chunk if self.timing else self.params.tokens_per_chunk

    @property
    def speculative(self) -> bool:
        """Whether the engine drafts tokens (fixed chunks of more than one count as drafts)."""
        return self.tokens_per_chunk > 1 or (self.timing is None and self.params.speculation is not None)

    @property
    def server_header(self) -> str:
        """The ``server`` response header: it names the engine the profile imitates."""
        return f"llmload-sim ({self.profile.engine} {self.profile.version})"
