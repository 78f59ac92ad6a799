"""Wires a Session into Locust's events. ``install(events)`` is called by each locustfile.

Local runs only for now: the process that runs the users also writes the summary.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from llmload.errors import LlmloadError
from llmload.export import console
from llmload.export.summary import reproducibility, run_summary, stage_summary
from llmload.locust.options import add_options, to_config
from llmload.locust.session import Session

_ATTR = "llmload_session"


def session_of(environment: Any) -> Session:
    session: Session | None = getattr(environment, _ATTR, None)
    if session is None:
        raise RuntimeError("llmload is not installed: call llmload.locust.install(events) "
                           "in the locustfile")
    return session


def _fatal(exc: LlmloadError) -> None:
    # A user error before the run: one clear line and a non-zero exit, no traceback.
    print(f"llmload: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(exc.exit_code)


def _on_init(environment: Any, **_kw: Any) -> None:
    opts = environment.parsed_options
    if opts is None:
        return
    scenario = "+".join(sorted({getattr(u, "scenario", u.__name__) for u in environment.user_classes}))
    try:
        config = to_config(opts, scenario=scenario)
        session = Session(config)
    except LlmloadError as exc:
        _fatal(exc)
        return
    session.concurrency = opts.num_users
    if not opts.stop_timeout:
        # Let in-flight requests finish at the end (the drain) instead of being killed.
        environment.stop_timeout = config.phases.drain_s
    setattr(environment, _ATTR, session)


def _on_test_start(environment: Any, **_kw: Any) -> None:
    try:
        session_of(environment).start()
    except LlmloadError as exc:
        _fatal(exc)


def _on_test_stopping(environment: Any, **_kw: Any) -> None:
    session = session_of(environment)
    runner = environment.runner
    session.close_window(getattr(runner, "target_user_count", None) or session.concurrency or 0)


def _on_test_stop(environment: Any, **_kw: Any) -> None:
    session = session_of(environment)
    summary = build_summary(session, complete=True)
    session.results.write_json("summary.json", summary)
    session.results.write_json("histograms.json", {"stages": [session.stats.to_dict()]})
    session.close()
    print(console.render(summary, str(session.results.path)), flush=True)


def build_summary(session: Session, *, complete: bool) -> dict[str, Any]:
    cfg = session.config
    warnings: list[str] = []
    health = getattr(session, "health_snapshot", None) or session.health.snapshot()
    bound = session.health.is_bound(health)
    if session.window.t0_ns is None:
        warnings.append("the warm-up never completed: no request was measured; run longer or "
                        "lower --warmup-requests")
    stage = stage_summary(
        session.stats,
        index=0,
        concurrency=session.concurrency,
        duration_s=session.window_seconds,
        client_health={session.process_tag: health},
        client_bound=bound,
        warnings=warnings,
        window=session.window,
    )
    run = {
        "id": session.run_id,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(session.started_at)),
        "window_opened_at": session.window_opened_wall,
        "target": cfg.host,
        "model": session.model,
        "scenario": cfg.scenario,
        "options": cfg.public_dict(),
        "records": [session.describe()],
        "reproducibility": reproducibility(cfg.workload.seed, workers=1),
    }
    return run_summary(run=run, stages=[stage], complete=complete)


def install(events: Any) -> None:
    """Register llmload's options and listeners on Locust's event hooks."""
    events.init_command_line_parser.add_listener(add_options)
    events.init.add_listener(_on_init)
    events.test_start.add_listener(_on_test_start)
    events.test_stopping.add_listener(_on_test_stopping)
    events.test_stop.add_listener(_on_test_stop)
