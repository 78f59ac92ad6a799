"""`llmload tune EXPERIMENT`: which server configuration to run, under your objectives.

Each configuration of the experiment file (docs/tune.md) in turn: start its server, wait until
it generates (its log tells slow loading from a hang), clear its prefix cache where the engine
lets us, run the experiment's sweep against it, stop it. A configuration whose server fails to
start, never becomes ready or dies mid-sweep is recorded with its exit code and the tail of its
log, and the next one starts. At the end, one table over all of them, the recommendation line
and ``llmload compare``'s comparison (``comparison.md``, ``report.html``).

Results: ``RESULTS_DIR/NAME/<configuration>/`` holds each sweep's results, its ``server.log``
and ``configuration.json`` (how it ended); ``--resume`` skips the configurations that ended and
reruns the one a Ctrl+C cut.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType

import orjson

from llmload.cli import tune_client
from llmload.cli.child import run_child
from llmload.cli.sweep import echo
from llmload.cli.tune_probes import Guard, drifts, read_object
from llmload.config.apikey import read_api_key
from llmload.config.commands import declare
from llmload.config.experiment import (
    ClientValue,
    Configuration,
    Experiment,
    client_argv,
    load_experiment,
    parse_overrides,
    render,
)
from llmload.config.options import OPTIONS, add_arguments
from llmload.config.quality import Quality, drift_limit
from llmload.errors import ResultsError
from llmload.export import compare_render, tune_render
from llmload.export.compare import compare
from llmload.export.rundata import load_run, read_summary
from llmload.protocol.jsonvalue import JSON
from llmload.results.choice import Candidate, Choice, choose, objectives_of
from llmload.results.exitcodes import ExitCode
from llmload.target import control, launch
from llmload.target.fingerprint import auth_headers, fingerprint
from llmload.target.probes import Answers
from llmload.target.wait import WaitCode, wait_ready

STATE = "configuration.json"
_DONE = ("complete", "failed")  # what --resume skips


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload tune", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("experiment", type=Path, metavar="EXPERIMENT", help="the experiment file (TOML)")
    declare(p, "--results-dir", "--name", "--resume", "--retry-failed", "--set", "--max-answer-drift")
    declare(p, "--dry-run")
    add_arguments(
        p.add_argument_group("each configuration's runs (docs/history.md)"), _HISTORY, env=False, sweep=True
    )
    return p


_HISTORY = tuple(o for o in OPTIONS if o.group == "history")


def _with_history(
    experiment: Experiment, *, history: str | None, no_history: bool, labels: Sequence[str]
) -> Experiment:
    """The store options of the command line (``--history``, ``--no-history``, ``--label``),
    given to every configuration's runs; its labels join those the experiment file gives."""
    given: dict[str, ClientValue] = {"history": history} if history else {}
    given |= {"no_history": True} if no_history else {}
    if not given and not labels:
        return experiment
    configurations = []
    for c in experiment.configurations:
        own = c.client.get("label", ())
        joined = (*(own if isinstance(own, tuple) else (own,)), *labels)
        client = {**c.client, **given, **({"label": joined} if joined else {})}
        configurations.append(replace(c, client=client))
    return replace(experiment, configurations=tuple(configurations))


@dataclass(frozen=True, slots=True)
class Ended:
    """How one configuration ended."""

    status: str  # complete, failed, partial
    reason: str  # the sweep's verdict line, or why it failed
    sweep_exit: int | None = None
    server_exit: int | None = None
    log_tail: str = ""
    cache_reset: str = ""

    def state(self, c: Configuration, started: float) -> dict[str, JSON]:
        return {
            "name": c.name,
            "params": {k: v for k, v in c.params.items()},
            "status": self.status,
            "reason": self.reason,
            "sweep_exit": self.sweep_exit,
            "server_exit": self.server_exit,
            "cache_reset": self.cache_reset,
            "minutes": round((time.time() - started) / 60, 2),
            "log_tail": self.log_tail,
        }


def _write(path: Path, value: JSON) -> None:
    path.write_bytes(orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n")


def _failed(reason: str, server: launch.Server, *, sweep_exit: int | None = None) -> Ended:
    return Ended("failed", reason, sweep_exit, server.exit_code(), launch.log_tail(server.log))


def run_one(experiment: Experiment, c: Configuration, cdir: Path) -> Ended:
    """Start, wait, reset, sweep, stop: one configuration. Ctrl+C stops its server and raises."""
    spec = experiment.server
    log = cdir / "server.log"
    values = c.values(
        port=str(launch.free_port()), log=str(log.resolve()), dir=str(cdir.resolve()), python=sys.executable
    )
    url = render(spec.url, values, "server.url")
    command = render(spec.command, values, "server.command") if spec.command else None
    start = render(spec.start, values, "server.start") if spec.start else None
    stop = render(spec.stop, values, "server.stop") if spec.stop else None
    print(f"llmload tune: [{c.name}] starting: {command or start}", flush=True)
    try:
        server = launch.start(
            url, log, experiment.directory, command=command, start_hook=start, stop_hook=stop
        )
    except launch.HookFailed as exc:
        return Ended("failed", str(exc), server_exit=exc.code, log_tail=launch.log_tail(log))
    cut = True
    try:
        ended = _measure(experiment, c, cdir, server)
        cut = False
        return ended
    finally:
        code = server.stop(spec.stop_grace_s)
        if cut:
            print(f"llmload tune: [{c.name}] interrupted; its server stopped (exit {code})", flush=True)


def _measure(experiment: Experiment, c: Configuration, cdir: Path, server: launch.Server) -> Ended:
    spec = experiment.server
    named = c.client.get("api_key_env")  # the configuration's sweep reads the same variable
    api_key = read_api_key(str(named) if named else None, os.environ)
    waited = wait_ready(
        server.url,
        timeout_s=spec.ready_timeout_s,
        log_file=str(server.log),
        log_stall_s=spec.log_stall_s,
        api_key=api_key,
        exited=server.exit_code,
    )
    if waited.code is not WaitCode.READY:
        return _failed(f"never ready: {waited.message}", server)
    reset = "no cache reset: reset_cache = off"
    if spec.reset_cache == "auto":
        engine = fingerprint(server.url, api_key=api_key).get("engine")
        reset = control.reset_cache(server.url, str(engine) if engine else None, auth_headers(api_key))
    print(f"llmload tune: [{c.name}] ready after {waited.elapsed_s:.1f} s; {reset}", flush=True)
    guard = None
    if experiment.quality is not None:
        headers = auth_headers(api_key)
        model = c.client.get("model")
        guard = Guard(
            experiment.quality, server.url, headers, model=str(model) if model else None, api_key=api_key
        )
        alone = guard.alone()
        print(f"llmload tune: [{c.name}] probes alone: {_answered(alone)}", flush=True)
    try:
        code = _sweep(c, cdir, server.url, guard)
    finally:
        loaded = guard.write(cdir) if guard else None
    if guard is not None:
        print(f"llmload tune: [{c.name}] probes under load: {_answered(loaded)}", flush=True)
    if code == ExitCode.INTERRUPTED:
        raise KeyboardInterrupt
    if (died := server.exit_code()) is not None:
        return _failed(f"the server exited with {died} during the {c.mode}", server, sweep_exit=code)
    found = tune_client.measured(c, cdir)
    if found is None:
        return _failed(f"the {c.mode} wrote no summary (exit {code})", server, sweep_exit=code)
    return Ended("complete", found.verdict, sweep_exit=code, cache_reset=reset)


def _answered(answers: Answers | None) -> str:
    if answers is None:
        return "none (the heaviest stage was never seen full)"
    got = sum(t is not None for t in answers.texts)
    errors = f"; {answers.errors[0]}" if answers.errors else ""
    return f"{got}/{len(answers.texts)} answered{errors}"


def _sweep(c: Configuration, cdir: Path, url: str, guard: Guard | None) -> int:
    """The configuration's sweep (or search), its probes riding along with the heaviest stage."""
    port = launch.free_port() if guard else None
    command = tune_client.command(c, url, cdir, prometheus_port=port)
    if guard is not None:
        guard.loaded(f"http://127.0.0.1:{port}/metrics", tune_client.heaviest(c, url, cdir))
    echo(f"llmload tune: [{c.name}]", command)
    return run_child(command).returncode


def _outcomes(
    experiment: Experiment, out: Path
) -> tuple[list[tune_render.Outcome], list[Candidate], dict[str, Path]]:
    """How each configuration ended, its candidate, and the run compare shows for each complete one."""
    outcomes, candidates, runs = [], [], {}
    drift = drifts(experiment, out)
    for c in experiment.configurations:
        state = read_object(out / c.dirname / STATE)
        status = str(state.get("status", "pending"))
        minutes = state.get("minutes")
        d = drift.get(c.name)
        outcomes.append(
            tune_render.Outcome(
                c.name,
                tuple(str(c.params.get(k, "-")) for k in c.varied),
                status,
                (d.disqualified if d and d.disqualified and status == "complete" else "")
                or str(state.get("reason", "")),
                float(minutes) if isinstance(minutes, int | float) else None,
                None if d is None else (d.under_load, d.against_first),
            )
        )
        found = tune_client.measured(c, out / c.dirname) if status == "complete" else None
        if found is not None:
            runs[c.name] = found.run_dir
            candidates.append(replace(found.candidate, disqualified=d.disqualified) if d else found.candidate)
        elif status == "failed":
            candidates.append(Candidate(c.name, (), str(state.get("reason", ""))))
    return outcomes, candidates, runs


def write_answer(experiment: Experiment, out: Path) -> tuple[Choice, list[tune_render.Outcome]]:
    """tune.json, comparison.md and report.html from the configurations' states and results."""
    outcomes, candidates, runs = _outcomes(experiment, out)
    complete = list(runs.values())
    choice = choose(candidates, objectives_of({name: read_summary(path) for name, path in runs.items()}))
    varied = experiment.configurations[0].varied
    markdown = tune_render.markdown(experiment.name, varied, outcomes, choice)
    if complete:
        comparison = compare([load_run(path) for path in complete])
        markdown += "\n" + compare_render.markdown(comparison)
        intro = tune_render.html_intro(varied, outcomes, choice)
        page = compare_render.html_page(
            comparison, title=f"llmload tune: {experiment.name}", intro=intro, marks=tune_render.marks(choice)
        )
        (out / "report.html").write_text(page, encoding="utf-8")
    (out / "comparison.md").write_text(markdown, encoding="utf-8")
    states = [read_object(out / c.dirname / STATE) or {"name": c.name} for c in experiment.configurations]
    _write(
        out / "tune.json",
        {"experiment": experiment.name, "recommendation": choice.line(), "configurations": states},
    )
    return choice, outcomes


def _dry_run(experiment: Experiment) -> int:
    for c in experiment.configurations:
        values = c.values(port="PORT", log="LOG", dir="DIR", python=sys.executable)
        server = experiment.server
        shown = render(server.command or server.start or "", values, "server")
        print(f"{c.name}:\n  server: {shown}\n  url:    {render(server.url, values, 'server.url')}")
        print(f"  {c.mode}:  {' '.join(client_argv(c.client))}")
    return 0


def _exit_code(outcomes: Sequence[tune_render.Outcome], choice: Choice) -> ExitCode:
    if any(o.status == "failed" for o in outcomes):
        return ExitCode.CONFIGS_FAILED
    if choice.by_throughput is None:
        return ExitCode.SLO_MISSED
    return ExitCode.OK


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # SIGTERM (a Job deleted, say) ends the matrix as Ctrl+C does


def main(argv: Sequence[str]) -> int:
    signal.signal(signal.SIGTERM, _terminated)  # the servers live in sessions of their own
    args = _parser().parse_args(list(argv))
    experiment = _with_history(
        load_experiment(args.experiment, parse_overrides(args.set or ())),
        history=args.history,
        no_history=args.no_history,
        labels=args.label or (),
    )
    if args.max_answer_drift is not None:
        limit = drift_limit(args.max_answer_drift, "--max-answer-drift")
        quality = replace(experiment.quality or Quality(), max_answer_drift=limit)
        experiment = replace(experiment, quality=quality)
    for c in experiment.configurations:
        tune_client.parse_client(c, "http://127.0.0.1:1", Path("."))  # a bad option stops it here
    if args.dry_run:
        return _dry_run(experiment)
    out = Path(args.results_dir) / (args.name or experiment.name)
    if (out / "tune.json").exists() and not args.resume:
        raise ResultsError(
            f"{out} already holds this experiment: --resume continues it, --name NEW starts another"
        )
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "tune.json", {"experiment": experiment.name, "configurations": []})
    begun = time.time()
    interrupted = False
    for c in experiment.configurations:
        cdir = out / c.dirname
        status = read_object(cdir / STATE).get("status")
        if args.resume and status in _DONE and not (status == "failed" and args.retry_failed):
            print(f"llmload tune: [{c.name}] {status} before: skipped", flush=True)
            continue
        shutil.rmtree(cdir, ignore_errors=True)  # a cut or retried configuration starts clean
        cdir.mkdir(parents=True)
        started = time.time()
        try:
            ended = run_one(experiment, c, cdir)
        except KeyboardInterrupt:
            ended, interrupted = Ended("partial", "interrupted: --resume reruns it"), True
        _write(cdir / STATE, ended.state(c, started))
        print(f"llmload tune: [{c.name}] {ended.status}: {ended.reason}", flush=True)
        if ended.status == "failed" and ended.log_tail:
            print("  " + "\n  ".join(ended.log_tail.splitlines()[-5:]), flush=True)
        if interrupted:
            break
    choice, outcomes = write_answer(experiment, out)
    print(
        "\n" + tune_render.console(experiment.name, experiment.configurations[0].varied, outcomes, choice),
        end="",
    )
    print(
        f"llmload tune: {(time.time() - begun) / 60:.1f} min; results in {out} (comparison.md, report.html)"
    )
    if interrupted:
        print("llmload tune: interrupted: the same command with --resume continues", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    return int(_exit_code(outcomes, choice))
