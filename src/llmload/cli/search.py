"""`llmload search`: the highest concurrency (or request rate) that meets the SLOs.

Bisection over short single-stage runs: each probe is a one-level sweep (warm-up, window,
drain) judged by ``--slo`` and ``--max-error-rate``; the answer is reported as the interval
between the highest level that passed and the lowest that failed, with every probe's numbers.

With ``--slo-tier RULES`` (repeatable) there is one answer per tier: the highest level that meets
the tier's rules (and ``--slo`` and ``--max-error-rate``). A level is probed once: its summary is
judged against every tier, and each tier's bisection starts from what the probes so far say of it.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import orjson

from llmload.cli.child import run_child
from llmload.cli.locust_call import LocustCall
from llmload.cli.processes import Asked, Load, resolve
from llmload.cli.sweep import Target, Waiting
from llmload.cli.sweep import _parser as sweep_parser
from llmload.config.commands import declare
from llmload.config.settings import ChecksConfig
from llmload.errors import ConfigError, TargetError
from llmload.export.rundata import checks_of, read_summary, verdict_of
from llmload.metrics.slo import SloRule, parse_slo
from llmload.protocol.jsonvalue import JSON
from llmload.results.exitcodes import ExitCode
from llmload.results.summary import Summary
from llmload.results.verdict import judge


@dataclass(frozen=True, slots=True)
class Tier:
    text: str  # as given to --slo-tier
    rules: tuple[SloRule, ...]


@dataclass(frozen=True, slots=True)
class TierVerdict:
    passed: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Probe:
    level: float
    passed: bool
    summary_path: str
    reasons: tuple[str, ...]
    tiers: tuple[TierVerdict, ...] = ()  # one per --slo-tier, in the order given


@dataclass(frozen=True, slots=True)
class Search:
    """What the search looks for: the highest level of ``by`` in [``low``, ``high``] that meets
    the objectives (``--slo``, ``--max-error-rate``, and each ``--slo-tier`` on its own)."""

    by: str  # concurrency or rate
    low: float
    high: float
    tolerance: float  # a rate's bisection stops within this ratio
    slo: str | None
    max_error_rate: float | None
    tiers: tuple[Tier, ...]

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> Search:
        """Every objective checked before the first probe."""
        if not args.slo and not args.max_error_rate and not args.slo_tier:
            example = "e.g. --slo 'ttft_p99_ms<=500,tpot_p50_ms<=50'"
            raise ConfigError("--slo", args.slo, f"a search needs an objective, {example}")
        parse_slo(args.slo)
        if not 0 < args.min <= args.max:
            raise ConfigError("--min", args.min, "must be > 0 and <= --max")
        tiers = parse_tiers(args.slo_tier or ())
        return cls(args.by, args.min, args.max, args.tolerance, args.slo, args.max_error_rate, tiers)

    @property
    def integer(self) -> bool:
        return self.by == "concurrency"

    def highest(self, asked: Asked) -> Load:
        """The load of the highest probe: every probe runs with the processes it needs."""
        if self.integer:
            return Load(int(self.high), None, asked.tokens_per_request)
        return Load(None, self.high, asked.tokens_per_request)


@dataclass(frozen=True, slots=True)
class Answer:
    tier: Tier
    good: float | None  # the highest level that met it
    bad: float | None  # the lowest level that missed it


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


_PROG = "llmload search"


def _parser() -> argparse.ArgumentParser:
    p = sweep_parser()
    p.prog = _PROG
    p.description = __doc__
    declare(p, "--min", "--max", "--by", "--tolerance", "--slo-tier")
    return p


def parse_tiers(texts: Sequence[str]) -> tuple[Tier, ...]:
    """Every ``--slo-tier``, parsed before the first probe: a wrong rule stops the search."""
    tiers = []
    for text in texts:
        try:
            rules = parse_slo(text)
        except ConfigError as e:
            raise ConfigError("--slo-tier", e.value, e.problem) from None
        if not rules:
            raise ConfigError("--slo-tier", text, "no objective given, e.g. 'ttft_p90_ms<=1000'")
        tiers.append(Tier(text.strip(), rules))
    return tuple(tiers)


def judge_tier(summary: Summary, base: ChecksConfig, tier: Tier) -> TierVerdict:
    """The probe's verdict, had its checks included the tier's rules."""
    checks = ChecksConfig(base.slo + tier.rules, base.max_error_rate, base.fail_on_client_bound)
    verdict = judge(summary, checks)
    return TierVerdict(verdict.code is ExitCode.OK, verdict.reasons)


def known_interval(judged: dict[float, bool], low: float, high: float) -> tuple[float, float]:
    """Where a bisection over [low, high] can start, given levels already judged: the lowest
    that failed and the highest below it that passed (either end when none is known)."""
    bad = min((level for level, ok in judged.items() if not ok and low <= level <= high), default=None)
    good = max(
        (
            level
            for level, ok in judged.items()
            if ok and low <= level <= high and (bad is None or level < bad)
        ),
        default=None,
    )
    return (low if good is None else good), (high if bad is None else bad)


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    search, target, call = Search.parsed(args), Target.parsed(args), LocustCall.parsed(args)
    probes: list[Probe] = []
    asked = call.asked()
    with target.url(_PROG) as host:
        waited = Waiting.parsed(args).until_ready(host, asked)
        if waited is not ExitCode.OK:
            return int(waited)
        here = target.here(host)
        processes = resolve(call.processes, host, asked, search.highest(asked), server_here=here, prog=_PROG)
        call = replace(call, processes=processes)
        good, bad, answers = _search(search, call, host, probes)
    return _report(search, call, probes, good=good, bad=bad, answers=answers)


def _search(
    search: Search, call: LocustCall, host: str, probes: list[Probe]
) -> tuple[float | None, float | None, list[Answer]]:
    """Bisect for the highest passing level (per tier, strictest first); ``probes`` receives
    every probe run, each level once whichever tier asks."""
    base_id, tiers, integer = call.run_id or "search", search.tiers, search.integer
    probed: dict[float, Probe] = {}

    def probe(level: float) -> Probe:
        if level in probed:
            return probed[level]
        found = _run_probe(call, host, level, f"{base_id}-{len(probes):02d}", integer, tiers=tiers)
        probes.append(found)
        probed[level] = found
        print(probe_line(search.by, found, tiers), flush=True)
        return found

    if not tiers:
        good, bad = bisect(
            search.low,
            search.high,
            lambda level: probe(level).passed,
            integer=integer,
            tolerance=search.tolerance,
        )
        return good, bad, []
    answers = []
    for i, tier in enumerate(tiers):

        def tier_passes(level: float, i: int = i) -> bool:
            return probe(level).tiers[i].passed

        low, high = known_interval({p.level: p.tiers[i].passed for p in probes}, search.low, search.high)
        t_good, t_bad = bisect(low, high, tier_passes, integer=integer, tolerance=search.tolerance)
        answers.append(Answer(tier, t_good, t_bad))
    answers.sort(key=strictness)
    return answers[0].good, answers[0].bad, answers  # the strictest: what meets every tier


def _report(
    search: Search,
    call: LocustCall,
    probes: list[Probe],
    *,
    good: float | None,
    bad: float | None,
    answers: list[Answer],
) -> int:
    """The search's JSON file, its verdict line(s) and its exit code."""
    result: dict[str, JSON] = {
        "by": search.by,
        "slo": search.slo,
        "max_error_rate": search.max_error_rate,
        "highest_passing": good,
        "lowest_failing": bad,
        "probes": [vars_of(p) for p in probes],
    }
    if answers:
        result["tiers"] = [
            {"slo": a.tier.text, "highest_passing": a.good, "lowest_failing": a.bad} for a in answers
        ]
    out = call.results_dir / f"{call.run_id or 'search'}.json"
    out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    if answers:
        lines = [tier_verdict(search.by, a) for a in answers]
        print("\n".join(lines) + f"\nllmload search: details in {out}", flush=True)
        missed = any(a.good is None for a in answers)
        return int(ExitCode.SLO_MISSED if missed else ExitCode.OK)
    print(search_verdict(search.by, good, bad) + f"\nllmload search: details in {out}", flush=True)
    return int(ExitCode.OK if good is not None else ExitCode.SLO_MISSED)


def strictness(answer: Answer) -> tuple[float, float]:
    """Strictest first: the tier met by the fewest levels."""
    good = -math.inf if answer.good is None else answer.good
    bad = math.inf if answer.bad is None else answer.bad
    return good, bad


def _run_probe(
    call: LocustCall,
    host: str,
    level: float,
    run_id: str,
    integer: bool,
    *,
    tiers: Sequence[Tier] = (),
) -> Probe:
    if integer:
        probe = call.own_run(run_id, repeat=1, levels=str(int(level)))
    else:  # a rate is Locust's option, after --
        probe = call.own_run(run_id, repeat=1, tail=("--rates", f"{level:g}"))
    proc = run_child(probe.command(host), quiet=True)
    if proc.returncode == ExitCode.INTERRUPTED:
        raise KeyboardInterrupt  # Ctrl+C during a probe ends the search, as anywhere else
    path = call.results_dir / run_id / "summary.json"
    if not path.is_file():
        raise ConfigError(
            "--host",
            host,
            f"a probe wrote no summary (exit {proc.returncode}): "
            f"{proc.stderr.strip().splitlines()[-1:] or proc.stdout[-500:]}",
        )
    summary = read_summary(path.parent)
    verdict = verdict_of(summary)
    if verdict.code == ExitCode.COULD_NOT_START:  # no level can pass: say why, at once
        raise TargetError(f"the probe at {level:g} could not measure: {verdict.line}")
    base = checks_of(summary)
    judged = tuple(judge_tier(summary, base, tier) for tier in tiers)
    return Probe(level, verdict.code == 0, str(path), verdict.reasons, judged)


def vars_of(p: Probe) -> dict[str, JSON]:
    found: dict[str, JSON] = {
        "level": p.level,
        "passed": p.passed,
        "summary": p.summary_path,
        "reasons": list(p.reasons),
    }
    if p.tiers:
        found["tiers"] = [{"passed": t.passed, "reasons": list(t.reasons)} for t in p.tiers]
    return found


def probe_line(by: str, probe: Probe, tiers: Sequence[Tier]) -> str:
    if not tiers:
        return f"llmload search: {by} {probe.level:g} {'meets' if probe.passed else 'misses'} the objectives"
    said = ", ".join(
        f"{'meets' if t.passed else 'misses'} '{tier.text}'"
        for tier, t in zip(tiers, probe.tiers, strict=True)
    )
    return f"llmload search: {by} {probe.level:g} {said}"


def tier_verdict(by: str, answer: Answer) -> str:
    good, bad, head = answer.good, answer.bad, f"llmload search: tier '{answer.tier.text}'"
    if good is None:
        return f"{head}: even the lowest {by} ({bad:g}) misses it"
    if bad is None:
        return f"{head}: the highest {by} tried ({good:g}) still meets it"
    return f"{head}: the highest {by} meeting it is {good:g} ({bad:g} misses it)"


def search_verdict(by: str, good: float | None, bad: float | None) -> str:
    if good is None:
        return f"llmload search: even the lowest {by} ({bad:g}) misses the objectives"
    if bad is None:
        return f"llmload search: the highest {by} tried ({good:g}) still meets the objectives"
    return (
        f"llmload search: the highest {by} meeting the objectives is {good:g} "
        f"({bad:g} misses them): the answer lies in [{good:g}, {bad:g})"
    )
