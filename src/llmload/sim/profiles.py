"""Profiles: named servers whose parameters are solved from measured targets.

A profile stores what was measured (output tok/s of the default sweep workload at a few
concurrencies) rather than step times, and solves its step times so that the analytic stage
throughput of ``model.py`` hits those targets. The mean step time is linear in
``(base, per_seq, per_seq2)`` once the batch size is known, and the batch size does not depend on
the step times, so the solve is one small linear system, exact rather than fitted.

The targets are of prompts that share no prefix (each starts with a unique salt word), so the
solve charges every prompt token's prefill whether or not the profile has a prefix cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from llmload.sim.jsonvalue import JSON
from llmload.sim.model import (
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_PROMPT_TOKENS,
    NS_PER_S,
    ModelParams,
    Speculation,
    events_per_request,
    mean_running,
)

# The unknowns a profile may solve for, in ModelParams field names.
_FREE_NAMES = ("step_base_ns", "step_per_seq_ns", "step_per_seq2_ns")


@dataclass(frozen=True, slots=True)
class Profile:
    """A simulated server: throughput targets, fixed parameters, and how it presents itself."""

    name: str
    targets: tuple[tuple[int, float], ...]  # (concurrency, output tok/s) of the default workload
    free: tuple[str, ...]  # which of _FREE_NAMES the solve sets, one per target
    fixed: ModelParams  # everything else; the free fields are overwritten
    engine: str  # "vllm" or "sglang": the fingerprint endpoints and headers
    version: str
    model: str = "sim-llama-3-8b"
    launch_args: tuple[tuple[str, JSON], ...] = field(default=())
    # A drafter on top of the solved engine: the targets are the engine's without it.
    speculation: Speculation | None = None

    def params(self) -> ModelParams:
        return replace(solve(self), speculation=self.speculation)


def _solve_linear(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting for the 2x2 and 3x3 systems of a solve."""
    n = len(rhs)
    rows = [[*matrix[i], rhs[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        if abs(rows[pivot][col]) < 1e-12:
            raise ValueError("targets do not determine the parameters")
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(col + 1, n):
            factor = rows[r][col] / rows[col][col]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[col], strict=True)]
    out = [0.0] * n
    for r in reversed(range(n)):
        known = sum(rows[r][c] * out[c] for c in range(r + 1, n))
        out[r] = (rows[r][n] - known) / rows[r][r]
    return out


def solve(
    profile: Profile,
    prompt_tokens: int = DEFAULT_PROMPT_TOKENS,
    output_tokens: int = DEFAULT_OUTPUT_TOKENS,
) -> ModelParams:
    """Step times that make the analytic stage throughput equal every target."""
    if len(profile.targets) != len(profile.free) or not set(profile.free) <= set(_FREE_NAMES):
        raise ValueError(f"profile {profile.name}: one free parameter per target")
    fixed = profile.fixed
    steps = events_per_request(output_tokens, fixed.tokens_per_chunk)
    matrix: list[list[float]] = []
    rhs: list[float] = []
    for concurrency, tok_per_s in profile.targets:
        running = mean_running(fixed, concurrency, prompt_tokens, output_tokens)
        wanted_step = running * output_tokens / steps * NS_PER_S / tok_per_s
        prefill = running / steps * prompt_tokens * fixed.prefill_per_token_ns
        terms = dict(zip(_FREE_NAMES, (1.0, running, running * running), strict=True))
        known = sum(terms[n] * getattr(fixed, n) for n in _FREE_NAMES if n not in profile.free)
        matrix.append([terms[n] for n in profile.free])
        rhs.append(wanted_step - prefill - known)
    values = _solve_linear(matrix, rhs)
    if min(values) < 0:
        raise ValueError(f"profile {profile.name}: targets need negative step times {values}")
    solved = {name: round(v) for name, v in zip(profile.free, values, strict=True)}
    return replace(
        fixed,
        step_base_ns=solved.get("step_base_ns", fixed.step_base_ns),
        step_per_seq_ns=solved.get("step_per_seq_ns", fixed.step_per_seq_ns),
        step_per_seq2_ns=solved.get("step_per_seq2_ns", fixed.step_per_seq2_ns),
    )


_KV_BUDGET_TOKENS = 500_000
_BASE = ModelParams(
    step_base_ns=0,
    step_per_seq_ns=0,
    prefill_per_token_ns=20_000,  # 50k prompt tok/s: an 8B model on one H100-class GPU
    max_running=256,
    kv_budget_tokens=_KV_BUDGET_TOKENS,
    # On, as in vLLM and SGLang by default. Their cached blocks live in the KV pool itself, so an
    # idle server can keep a whole pool of them: between two runs, exactly the repeat-run trap.
    prefix_cache_tokens=_KV_BUDGET_TOKENS,
)
_TWO = ("step_base_ns", "step_per_seq_ns")


def all_profiles() -> tuple[Profile, ...]:
    """The built-in profiles; the first is the default."""
    sglang_args: tuple[tuple[str, JSON], ...] = (("tp_size", 1), ("mem_fraction_static", 0.88))
    return (
        Profile("vllm", ((1, 82.5), (128, 1536.0)), _TWO, _BASE, "vllm", "0.10.2"),
        Profile(
            "sglang-nograph",
            ((1, 27.0), (128, 2216.0)),
            _TWO,
            _BASE,
            "sglang",
            "0.5.2",
            launch_args=(("disable_cuda_graph", True), *sglang_args),
        ),
        Profile(
            "sglang",
            ((1, 63.6), (128, 2370.0)),
            _TWO,
            _BASE,
            "sglang",
            "0.5.2",
            launch_args=(("disable_cuda_graph", False), *sglang_args),
        ),
        # vLLM with an EAGLE-3 drafter: 3 draft tokens, each accepted with p = 0.7 in turn
        # (2.5 tokens per step), a drafter pass 5% of a single-stream step, and a verified token
        # costing 3/4 of a decoded one. It doubles one stream's speed and costs 15% of the
        # throughput at 128 streams, crossing over between 32 and 64.
        Profile(
            "vllm-eagle3",
            ((1, 82.5), (128, 1536.0)),
            _TWO,
            _BASE,
            "vllm",
            "0.10.2",
            launch_args=(("speculative_config", {"method": "eagle3", "num_speculative_tokens": 3}),),
            speculation=Speculation(draft_tokens=3, acceptance=0.7, draft_ns=600_000, verify_cost=0.75),
        ),
        # A batch that gets slower per sequence as it grows (the per_seq2 term), so the default
        # sweep peaks at 32 streams: the case a sweep must not mistake for "the last stage".
        Profile(
            "interior-peak",
            ((1, 60.0), (32, 800.0), (128, 450.0)),
            _FREE_NAMES,
            _BASE,
            "vllm",
            "0.10.2",
        ),
    )


def profile_names() -> tuple[str, ...]:
    return tuple(p.name for p in all_profiles())


def get_profile(name: str) -> Profile:
    for profile in all_profiles():
        if profile.name == name:
            return profile
    raise KeyError(name)
