"""`llmload search`: the highest concurrency (or request rate) that meets the SLOs.

Bisection over short single-stage runs: each probe is a one-level sweep (warm-up, window,
drain) judged by ``--slo`` and ``--max-error-rate``; the answer is reported as the interval
between the highest level that passed and the lowest that failed, with every probe's numbers.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.cli.child import run_child
from llmload.cli.processes import Load, resolve, server_is_here, tokens_per_request
from llmload.cli.sweep import _parser as sweep_parser
from llmload.cli.sweep import _target, locust_command, wait_for
from llmload.errors import ConfigError, TargetError
from llmload.export.rundata import read_summary, verdict_of
from llmload.metrics.slo import parse_slo
from llmload.protocol.jsonvalue import JSON
from llmload.results.exitcodes import ExitCode


@dataclass(frozen=True, slots=True)
class Probe:
    level: float
    passed: bool
    summary_path: str
    reasons: tuple[str, ...]


def bisect(
    low: float, high: float, passes: Callable[[float], bool], *, integer: bool, tolerance: float
) -> tuple[float | None, float | None]:
    """(highest passing, lowest failing) levels; either is None when the range has none.

    Assumes passing is monotone: fine below some level, failing above it.
    """
    if not passes(low):
        return None, low
    if passes(high):
        return high, None
    good, bad = low, high
    while (bad - good > 1) if integer else (bad / good > 1 + tolerance):
        mid = (good + bad) // 2 if integer else (good * bad) ** 0.5
        if passes(mid):
            good = mid
        else:
            bad = mid
    return good, bad


def _parser() -> argparse.ArgumentParser:
    p = sweep_parser()
    p.prog = "llmload search"
    p.description = __doc__
    p.add_argument("--min", type=float, default=1, help="lowest level to try")
    p.add_argument("--max", type=float, default=256, help="highest level to try")
    p.add_argument(
        "--by",
        choices=("concurrency", "rate"),
        default="concurrency",
        help="search over concurrency (users) or open-loop request rate",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.05,
        help="rates: stop when the interval is narrower than this fraction",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if not args.slo and not args.max_error_rate:
        raise ConfigError(
            "--slo", args.slo, "a search needs an objective, e.g. --slo 'ttft_p99_ms<=500,tpot_p50_ms<=50'"
        )
    parse_slo(args.slo)  # a bad clause stops the search before the first probe
    if not 0 < args.min <= args.max:
        raise ConfigError("--min", args.min, "must be > 0 and <= --max")
    integer = args.by == "concurrency"
    probes: list[Probe] = []
    base_id = args.run_id or "search"
    with _target(args) as host:
        waited = wait_for(args, host)
        if waited is not ExitCode.OK:
            return int(waited)
        args.processes = resolve(
            args,
            host,
            _highest(args, integer),
            server_here=server_is_here(host, args.sim is not None),
            prog="llmload search",
        )

        def passes(level: float) -> bool:
            probe = _run_probe(args, host, level, f"{base_id}-{len(probes):02d}", integer)
            probes.append(probe)
            verdict = "meets" if probe.passed else "misses"
            print(f"llmload search: {args.by} {level:g} {verdict} the objectives", flush=True)
            return probe.passed

        good, bad = bisect(args.min, args.max, passes, integer=integer, tolerance=args.tolerance)
    result = {
        "by": args.by,
        "slo": args.slo,
        "max_error_rate": args.max_error_rate,
        "highest_passing": good,
        "lowest_failing": bad,
        "probes": [vars_of(p) for p in probes],
    }
    out = Path(args.results_dir) / f"{base_id}.json"
    out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    print(search_verdict(args.by, good, bad) + f"\nllmload search: details in {out}", flush=True)
    return int(ExitCode.OK if good is not None else ExitCode.SLO_MISSED)


def _highest(args: argparse.Namespace, integer: bool) -> Load:
    """The load of the search's highest probe: every probe runs with the processes it needs."""
    tokens = tokens_per_request(args)
    if integer:
        return Load(int(args.max), None, tokens)
    return Load(None, args.max, tokens)


def _run_probe(args: argparse.Namespace, host: str, level: float, run_id: str, integer: bool) -> Probe:
    probe_args = argparse.Namespace(**vars(args))
    probe_args.run_id, probe_args.repeat = run_id, 1
    # a probe is one level: the sweep's other ways to choose levels do not apply
    probe_args.rates, probe_args.ramp, probe_args.until_saturated = None, None, False
    if integer:
        probe_args.levels = str(int(level))
    else:
        probe_args.locust_args = [*args.locust_args, "--rates", f"{level:g}"]
    proc = run_child(locust_command(probe_args, host), quiet=True)
    if proc.returncode == ExitCode.INTERRUPTED:
        raise KeyboardInterrupt  # Ctrl+C during a probe ends the search, as anywhere else
    path = Path(args.results_dir) / run_id / "summary.json"
    if not path.is_file():
        raise ConfigError(
            "--host",
            host,
            f"a probe wrote no summary (exit {proc.returncode}): "
            f"{proc.stderr.strip().splitlines()[-1:] or proc.stdout[-500:]}",
        )
    verdict = verdict_of(read_summary(path.parent))
    if verdict.code == ExitCode.COULD_NOT_START:  # no level can pass: say why, at once
        raise TargetError(f"the probe at {level:g} could not measure: {verdict.line}")
    return Probe(level, verdict.code == 0, str(path), verdict.reasons)


def vars_of(p: Probe) -> dict[str, JSON]:
    return {"level": p.level, "passed": p.passed, "summary": p.summary_path, "reasons": list(p.reasons)}


def search_verdict(by: str, good: float | None, bad: float | None) -> str:
    if good is None:
        return f"llmload search: even the lowest {by} ({bad:g}) misses the objectives"
    if bad is None:
        return f"llmload search: the highest {by} tried ({good:g}) still meets the objectives"
    return (
        f"llmload search: the highest {by} meeting the objectives is {good:g} "
        f"({bad:g} misses them): the answer lies in [{good:g}, {bad:g})"
    )
