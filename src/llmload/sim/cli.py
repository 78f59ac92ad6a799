"""``llmload sim``: the command line of the simulated server."""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Sequence
from fractions import Fraction

from llmload.errors import ConfigError
from llmload.flags import add_flags
from llmload.sim.config import SimConfig
from llmload.sim.faults import FaultPolicy, parse_modes
from llmload.sim.flags import SIM_FLAGS
from llmload.sim.model import NS_PER_MS, FixedTiming, ModelParams, Speculation
from llmload.sim.profiles import Profile, get_profile
from llmload.sim.router import RouterPolicy
from llmload.sim.slowdown import slower

# Flags of the batching model: (flag, ModelParams field, scale from the flag's unit to the field's).
_STEP_FLAGS = (
    ("step_base_ms", "step_base_ns", NS_PER_MS),
    ("step_per_seq_ms", "step_per_seq_ns", NS_PER_MS),
    ("step_per_seq2_ms", "step_per_seq2_ns", NS_PER_MS),
    ("prefill_per_token_ms", "prefill_per_token_ns", NS_PER_MS),
)
_CAP_FLAGS = ("max_running", "kv_budget_tokens", "tokens_per_chunk")
MAX_REPLICAS = 64
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110 token)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload sim",
        description="A simulated OpenAI-compatible LLM server with a batching performance model.",
    )
    add_flags(p, SIM_FLAGS)
    return p


def _speculation_of(
    args: argparse.Namespace, given: Speculation | None, step_base_ns: int
) -> Speculation | None:
    """The profile's drafter (``given``), or the flags' (which start from it or from defaults)."""
    flags = (args.draft_tokens, args.draft_acceptance, args.draft_ms, args.draft_verify_cost)
    if all(f is None for f in flags):
        return given
    if given is None and args.draft_tokens is None:
        raise ConfigError("--draft-tokens", None, "give it to turn speculative decoding on")
    if args.draft_tokens is not None and args.draft_tokens < 0:
        raise ConfigError("--draft-tokens", args.draft_tokens, "must be >= 0 (0: off)")
    if args.draft_tokens == 0:
        return None
    base = given or Speculation(1, 0.7, round(step_base_ns * 0.05), 0.75)
    acceptance = base.acceptance if args.draft_acceptance is None else args.draft_acceptance
    if not 0.0 <= acceptance < 1.0:
        raise ConfigError("--draft-acceptance", acceptance, "must be in [0, 1)")
    verify = base.verify_cost if args.draft_verify_cost is None else args.draft_verify_cost
    if verify < 0:
        raise ConfigError("--draft-verify-cost", verify, "must be >= 0")
    return Speculation(
        base.draft_tokens if args.draft_tokens is None else args.draft_tokens,
        acceptance,
        base.draft_ns if args.draft_ms is None else _ns("--draft-ms", args.draft_ms),
        verify,
    )


def _per_word(value: str) -> Fraction:
    try:
        per_word = Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise ConfigError("--tokens-per-word", value, "give a number such as 1.3") from None
    if not 0 < per_word <= 8:
        raise ConfigError("--tokens-per-word", value, "must be in (0, 8]")
    return per_word


def _ns(flag: str, value: float) -> int:
    if value < 0:
        raise ConfigError(flag, value, "must be >= 0")
    return round(value * NS_PER_MS)


def _timing(args: argparse.Namespace, tokens_per_chunk: int) -> FixedTiming | None:
    if args.ttft_ms is None and args.step_ms is None:
        return None
    if args.ttft_ms is None or args.step_ms is None:
        raise ConfigError("--ttft-ms/--step-ms", (args.ttft_ms, args.step_ms), "give both")
    # Fixed timing serves every request at once, with no batch and no queue: a batching flag
    # would be silently ignored. A constant step that queues is --step-base-ms with
    # --step-per-seq-ms 0.
    batching = [*(f for f, _, _ in _STEP_FLAGS), "max_running", "kv_budget_tokens"]
    clash = [f for f in batching if getattr(args, f) is not None]
    if clash:
        raise ConfigError(f"--{clash[0].replace('_', '-')}", getattr(args, clash[0]),
                          "cannot be combined with --ttft-ms/--step-ms (no batch, no queue)")  # fmt: skip
    if args.step_ms <= 0:
        raise ConfigError("--step-ms", args.step_ms, "must be > 0")
    return FixedTiming(_ns("--ttft-ms", args.ttft_ms), _ns("--step-ms", args.step_ms),
                       tokens_per_chunk)  # fmt: skip


def _params(args: argparse.Namespace, base: ModelParams) -> ModelParams:
    changes: dict[str, int] = {}
    for flag, field, _ in _STEP_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            changes[field] = _ns("--" + flag.replace("_", "-"), value)
    for flag in _CAP_FLAGS:
        value = getattr(args, flag)
        if value is not None:
            if value < 1:
                raise ConfigError("--" + flag.replace("_", "-"), value, "must be >= 1")
            changes[flag] = value
    changes["prefix_cache_tokens"] = _prefix_cache_tokens(args, base, changes)
    ints = {f.name: changes.get(f.name, getattr(base, f.name)) for f in dataclasses.fields(ModelParams)}
    params = ModelParams(**{**ints, "speculation": None})
    speculation = _speculation_of(args, base.speculation, params.step_base_ns)
    if speculation is not None and params.tokens_per_chunk != 1:
        raise ConfigError("--tokens-per-chunk", params.tokens_per_chunk, "cannot be combined with a drafter")
    return dataclasses.replace(params, speculation=speculation)


def _prefix_cache_tokens(args: argparse.Namespace, base: ModelParams, changes: dict[str, int]) -> int:
    """The prefix cache's capacity: off, the flag's, or the KV budget when the profile caches."""
    if args.no_prefix_cache:
        if args.prefix_cache_tokens is not None:
            raise ConfigError("--prefix-cache-tokens", args.prefix_cache_tokens,
                              "cannot be combined with --no-prefix-cache")  # fmt: skip
        return 0
    if args.prefix_cache_tokens is not None:
        if args.prefix_cache_tokens < 1:
            raise ConfigError("--prefix-cache-tokens", args.prefix_cache_tokens, "must be >= 1")
        return int(args.prefix_cache_tokens)
    if not base.prefix_cache_tokens:
        return 0
    # The cache lives in the KV pool, so a resized pool resizes it.
    return changes.get("kv_budget_tokens", base.prefix_cache_tokens)


def _served_models(args: argparse.Namespace, profile: Profile) -> tuple[str, ...]:
    """``--model``'s names, the default one first."""
    if not args.model:
        return (profile.model,)
    names = tuple(name.strip() for name in args.model.split(","))
    if not all(names):
        raise ConfigError("--model", args.model, "an empty model name")
    if len(set(names)) != len(names):
        raise ConfigError("--model", args.model, "a model name given twice")
    return names


def _routing(args: argparse.Namespace) -> tuple[int, RouterPolicy, str]:
    """``--replicas``, ``--router`` and the session header (lower case, as requests are read)."""
    if not 1 <= args.replicas <= MAX_REPLICAS:
        raise ConfigError("--replicas", args.replicas, f"must be in [1, {MAX_REPLICAS}]")
    if not _HEADER_NAME.fullmatch(args.session_header):
        raise ConfigError("--session-header", args.session_header, "is not an HTTP header name")
    router: RouterPolicy = args.router
    return args.replicas, router, args.session_header.lower()


def _faults(args: argparse.Namespace) -> FaultPolicy:
    if not 0.0 <= args.fault_rate <= 1.0:
        raise ConfigError("--fault-rate", args.fault_rate, "must be in [0, 1]")
    if args.fault is None:
        return FaultPolicy(seed=args.seed)
    try:
        modes = parse_modes(args.fault)
    except ValueError as exc:
        raise ConfigError("--fault", args.fault, str(exc)) from None
    if args.fault_first < 0:
        raise ConfigError("--fault-first", args.fault_first, "must be >= 0")
    return FaultPolicy(modes, args.fault_rate, args.seed, args.fault_first)


def _check_serving(args: argparse.Namespace, profile: Profile) -> None:
    """The serving flags that need no conversion, checked."""
    if args.keyfile is not None and args.certfile is None:
        raise ConfigError("--keyfile", str(args.keyfile), "needs --certfile")
    if args.startup_delay_s < 0:
        raise ConfigError("--startup-delay-s", args.startup_delay_s, "must be >= 0")
    if args.reasoning_tokens < 0:
        raise ConfigError("--reasoning-tokens", args.reasoning_tokens, "must be >= 0")
    if args.enable_per_request_metrics and args.no_per_request_metrics:
        raise ConfigError(
            "--no-per-request-metrics", True, "cannot be combined with --enable-per-request-metrics"
        )
    if args.enable_per_request_metrics and profile.engine != "vllm":
        raise ConfigError(
            "--enable-per-request-metrics",
            args.profile,
            f"is vLLM's: {profile.engine} sends no per-request timing on its OpenAI endpoints",
        )
    if not 0 <= args.port <= 65535:
        raise ConfigError("--port", args.port, "must be in [0, 65535]")


def config_from_args(argv: Sequence[str]) -> SimConfig:
    """Parse and validate the command line; raise ``ConfigError`` naming the bad flag."""
    args = _parser().parse_args(list(argv))
    profile = get_profile(args.profile)
    params = _params(args, profile.params())
    _check_serving(args, profile)
    params, timing = slower(args, params, _timing(args, params.tokens_per_chunk))
    if timing is not None and args.adapter_switch_ms:
        raise ConfigError("--adapter-switch-ms", args.adapter_switch_ms,
                          "cannot be combined with --ttft-ms/--step-ms (no batch steps)")  # fmt: skip
    model, *adapters = _served_models(args, profile)
    replicas, router, session_header = _routing(args)
    return SimConfig(
        host=args.host,
        port=args.port,
        profile=profile,
        params=params,
        timing=timing,
        model=model,
        seed=args.seed,
        emit_timestamps=args.emit_timestamps,
        request_log=args.request_log,
        faults=_faults(args),
        startup_delay_s=args.startup_delay_s,
        hang=args.hang,
        log_file=args.log_file,
        certfile=args.certfile,
        keyfile=args.keyfile,
        realtime=args.realtime,
        dcgm=args.dcgm,
        reasoning_tokens=args.reasoning_tokens,
        # vLLM's own default is off; the simulator's vLLM profiles answer with the metrics unless
        # told not to, so every run against it (the demo, --sim, tune) shows the join
        per_request_metrics=profile.engine == "vllm" and not args.no_per_request_metrics,
        tokens_per_word=_per_word(args.tokens_per_word),
        tokenize_route=not args.no_tokenize_route,
        adapters=tuple(adapters),
        adapter_switch_ns=_ns("--adapter-switch-ms", args.adapter_switch_ms),
        replicas=replicas,
        router=router,
        session_header=session_header,
        api_key=args.api_key or None,
    )


def main(argv: Sequence[str]) -> int:
    """Run the simulator until SIGTERM/SIGINT. Returns the exit status."""
    from llmload.sim.server import announce_stdout, run_loop, serve

    config = config_from_args(argv)
    run_loop(serve(config, announce_stdout))
    return 0
