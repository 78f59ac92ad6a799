"""`llmload gate`: did this run get slower than its baseline? (docs/history.md#the-gate)

  llmload gate [RUN] [--policy FILE] [--baseline NAME|rolling:N] [--format console|markdown]
               [--junit PATH]
  llmload gate accept RUN --reason TEXT [--accepted-by WHO]   accept RUN's regression (a waiver)
  llmload history pin RUN --as NAME            name RUN as a baseline (llmload.cli.gate.pin)

RUN is a run id as `llmload history` shows it (or its start; the newest match); without one,
the newest run in the store. The baseline is a pinned run by name, or the last N comparable
runs before RUN (runs of its comparability key that passed their own checks).

Exit codes: 0 pass (or a regression accepted by a waiver), 1 regression, 2 a wrong option,
store or run, 3 insufficient data, 4 the run failed its own checks.
"""

from __future__ import annotations

import argparse
import getpass
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path

from llmload.cli.store import open_existing, store_option
from llmload.config.commands import declare
from llmload.errors import ConfigError, HistoryError
from llmload.export import gate_render
from llmload.history.rows import Pin, Waiver
from llmload.results.comparable import differing
from llmload.results.gate import GateCode, GateResult, judge_run
from llmload.results.gate_policy import DEFAULT_POLICY, Baseline, GatePolicy, policy_of
from llmload.results.runrecord import RunRecord


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload gate", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("run", nargs="?", metavar="RUN", help="the run judged (default: the newest)")
    declare(p, "--policy", "--baseline", "--format", "--junit")
    store_option(p)
    return p


def _accept_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload gate accept",
        description="Accept a run's regression: the gate passes it, naming the reason.",
    )
    p.add_argument("run", metavar="RUN")
    declare(p, "--reason", "--accepted-by")
    store_option(p)
    return p


def _pin_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llmload history pin", description="Name a run as a baseline.")
    p.add_argument("run", metavar="RUN")
    declare(p, "--as")
    store_option(p)
    return p


def find_run(runs: Sequence[RunRecord], given: str | None) -> RunRecord:
    """The run a command names: by id (or its start), the newest match; none given, the newest."""
    if not runs:
        raise ConfigError("RUN", given, "the store holds no runs")
    if given is None:
        return runs[0]
    for run in runs:  # newest first
        if run.run_id == given:
            return run
    matches = [r for r in runs if r.run_id.startswith(given)]
    if len({r.run_id for r in matches}) == 1:
        return matches[0]
    said = "no run id starts with it" if not matches else f"{len(matches)} runs match: give more of the id"
    raise ConfigError("RUN", given, f"{said}; `llmload history` lists the runs")


def _same(a: RunRecord, pin: Pin) -> bool:
    return a.run_id == pin.run_id and (a.started_at or None) == pin.started_at


def _policy(given: Path | None) -> GatePolicy:
    if given is None:
        return DEFAULT_POLICY
    try:
        data = tomllib.loads(given.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError("--policy", str(given), f"cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("--policy", str(given), f"is not TOML: {exc}") from None
    return policy_of(data, str(given))


def _pinned_run(name: str, pins: Sequence[Pin], runs: Sequence[RunRecord], candidate: RunRecord) -> RunRecord:
    """The run pinned as ``name``, which must have run the candidate's workload."""
    pin = next((p for p in pins if p.name == name), None)
    if pin is None:
        names = ", ".join(p.name for p in pins) or "none yet"
        raise ConfigError(
            "--baseline", name, f"is no pinned baseline ({names}): `llmload history pin RUN --as NAME`"
        )
    base_run = next((r for r in runs if _same(r, pin)), None)
    if base_run is None:
        raise HistoryError(
            f"the pinned baseline {pin.name!r} names run {pin.run_id}, which the store no longer holds"
        )
    if base_run.key != candidate.key:
        fields = "; ".join(d.describe() for d in differing(base_run.key, candidate.key))
        raise ConfigError(
            "--baseline",
            name,
            f"ran another workload than {candidate.run_id}, so they do not compare: {fields}",
        )
    return base_run


def judge(
    run: str | None, *, store_path: str | None, baseline_text: str | None, policy_path: Path | None
) -> GateResult:
    """The run ``run`` names (none: the newest) against its baseline, read from the store:
    ``--baseline`` as given (None: the policy's), ``--policy`` (None: the built-in one)."""
    policy = _policy(policy_path)
    baseline = Baseline.parse(baseline_text, "--baseline") if baseline_text else policy.baseline
    with open_existing(store_path) as store:
        runs, pins, waivers = store.runs(), store.pins(), store.waivers()
    candidate = find_run(runs, run)
    started = candidate.started_s or 0.0
    # the key's earlier runs that passed their own checks, newest first
    history = [
        r
        for r in runs
        if r.key == candidate.key
        and r is not candidate
        and (r.started_s or 0.0) <= started
        and r.exit_code == 0
        and r.complete
    ]
    same_key_pins = [p for p in pins if any(_same(r, p) for r in history)]
    pinned = next(
        (r for p in sorted(same_key_pins, key=lambda p: -p.pinned_s) for r in history if _same(r, p)), None
    )
    if baseline.pin is not None:
        base_runs, pinned = [_pinned_run(baseline.pin, pins, runs, candidate)], None
    else:
        base_runs = history[: baseline.rolling]
    waiver = next(
        (w.reason for w in waivers if w.run_id == candidate.run_id and w.started_at == candidate.started_at),
        None,
    )
    return judge_run(
        candidate,
        base_runs,
        history,
        policy,
        baseline=baseline.describe(),
        pinned=pinned,
        waiver=waiver,
    )


def main(argv: Sequence[str]) -> int:
    if list(argv[:1]) == ["accept"]:
        return accept(argv[1:])
    args = _parser().parse_args(list(argv))
    if args.format == "html":
        raise ConfigError("--format", args.format, "the gate prints console text or markdown")
    result = judge(args.run, store_path=args.history, baseline_text=args.baseline, policy_path=args.policy)
    print(gate_render.markdown(result) if args.format == "markdown" else gate_render.text(result), end="")
    if args.junit is not None:
        try:
            args.junit.write_text(gate_render.junit(result), encoding="utf-8")
        except OSError as exc:
            print(f"llmload gate: --junit {args.junit}: {exc.strerror}", file=sys.stderr)
            return int(GateCode.USAGE)
    return int(result.code)


def accept(argv: Sequence[str]) -> int:
    args = _accept_parser().parse_args(list(argv))
    if not args.reason.strip():
        raise ConfigError("--reason", args.reason, "say why the regression is accepted")
    with open_existing(args.history) as store:
        run = find_run(store.runs(), args.run)
        by = args.accepted_by or _login()
        store.waive(Waiver(run.run_id, run.started_at, args.reason.strip(), by, time.time()))
    who = f" by {by}" if by else ""
    print(f"llmload gate: run {run.run_id}'s regression accepted{who}: {args.reason.strip()}")
    return 0


def pin(argv: Sequence[str]) -> int:
    """``llmload history pin RUN --as NAME``."""
    args = _pin_parser().parse_args(list(argv))
    with open_existing(args.history) as store:
        run = find_run(store.runs(), args.run)
        if run.exit_code != 0 or not run.complete:
            raise ConfigError(
                "RUN", args.run, f"failed its own checks ({run.verdict}): a baseline must pass them"
            )
        name = vars(args)["as"]  # a keyword: no attribute
        store.pin(name, run, time.time())
    print(f"llmload history: {name!r} is run {run.run_id} (key {run.key.hash})")
    return 0


def _login() -> str | None:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in a bare container
        return None
