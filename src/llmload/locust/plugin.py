"""Wires a Session and a Conductor into Locust's events. Each locustfile calls ``install(events)``.

Local runs: the one process conducts the stages, runs the users and writes the results.
"""

from __future__ import annotations

import sys
from typing import Any

from llmload.errors import LlmloadError
from llmload.export import console
from llmload.locust.conductor import Conductor
from llmload.locust.options import add_options, to_config
from llmload.locust.session import Session
from llmload.locust.summarize import build_summary
from llmload.stages import Announcement, StagePhase, sweep_plans

_SESSION = "llmload_session"
_CONDUCTOR = "llmload_conductor"


def session_of(environment: Any) -> Session:
    session: Session | None = getattr(environment, _SESSION, None)
    if session is None:
        raise RuntimeError("llmload is not installed: call llmload.locust.install(events) "
                           "in the locustfile")
    return session


def conductor_of(environment: Any) -> Conductor:
    conductor: Conductor = getattr(environment, _CONDUCTOR)
    return conductor


def _fatal(exc: LlmloadError) -> None:
    # A user error before the run: one clear line and a non-zero exit, no traceback.
    print(f"llmload: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(exc.exit_code)


def _on_init(environment: Any, **_kw: Any) -> None:
    opts = environment.parsed_options
    if opts is None:
        return
    classes = environment.user_classes
    scenario = "+".join(sorted({getattr(u, "scenario", u.__name__) for u in classes}))
    try:
        config = to_config(opts, scenario=scenario)
        session = Session(config)
        conductor = _conductor(environment, session, opts.num_users or 1)
    except LlmloadError as exc:
        _fatal(exc)
        return
    if not opts.stop_timeout:
        # Let in-flight requests finish at the end (the drain) instead of being killed.
        environment.stop_timeout = config.phases.drain_s
    setattr(environment, _SESSION, session)
    setattr(environment, _CONDUCTOR, conductor)


def _conductor(environment: Any, session: Session, users: int) -> Conductor:
    config = session.config
    phases = config.phases

    def announce(a: Announcement) -> None:
        finished = session.stage
        session.apply(a)
        if finished >= 0 and (a.phase is StagePhase.DONE or a.stage != finished):
            _write_results(session, complete=False)  # a finished stage survives an interrupt

    if environment.shape_class is None:
        return Conductor.single_stage(users, phases.warmup_requests, phases.warmup_s,
                                      announce, session.progress)
    sweep = config.sweep
    plans = sweep_plans(list(sweep.levels), window_s=sweep.window_s,
                        warmup_requests=phases.warmup_requests, warmup_s=phases.warmup_s,
                        drain_s=phases.drain_s, repeat=sweep.repeat)
    return Conductor(plans, announce, session.progress)


def _on_test_start(environment: Any, **_kw: Any) -> None:
    try:
        session_of(environment).start()
    except LlmloadError as exc:
        _fatal(exc)
    if environment.shape_class is None:
        conductor_of(environment).start_ticking()


def _on_test_stopping(environment: Any, **_kw: Any) -> None:
    conductor_of(environment).stop()


def _on_test_stop(environment: Any, **_kw: Any) -> None:
    session = session_of(environment)
    session.finish_stages()
    summary = _write_results(session, complete=True)
    session.close()
    print(console.render(summary, str(session.results.path)), flush=True)


def _write_results(session: Session, *, complete: bool) -> dict[str, Any]:
    summary = build_summary(session, complete=complete)
    stages = [state.stats.to_dict() for _, state in sorted(session.stages.items())]
    session.results.write_json("histograms.json", {"stages": stages})
    session.results.write_json("summary.json", summary)
    return summary


def install(events: Any) -> None:
    """Register llmload's options and listeners on Locust's event hooks."""
    events.init_command_line_parser.add_listener(add_options)
    events.init.add_listener(_on_init)
    events.test_start.add_listener(_on_test_start)
    events.test_stopping.add_listener(_on_test_stopping)
    events.test_stop.add_listener(_on_test_stop)
