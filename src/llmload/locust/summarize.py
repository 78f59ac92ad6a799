"""Assemble ``summary.json`` from a session's stages (the schema is in export/summary.py)."""

from __future__ import annotations

import time
from typing import Any

from llmload.export.summary import headline, reproducibility, run_summary, stage_summary
from llmload.locust.session import Session


def build_summary(session: Session, *, complete: bool, workers: int = 1) -> dict[str, Any]:
    cfg = session.config
    stages = []
    for index, state in sorted(session.stages.items()):
        warnings: list[str] = []
        if state.window.t0_ns is None:
            warnings.append("the warm-up never completed, so nothing was measured: run longer "
                            "or lower --warmup-requests")
        health = state.health or session.health.snapshot()
        stage = stage_summary(
            state.stats,
            index=index,
            concurrency=state.concurrency,
            duration_s=state.window_s,
            client_health={session.process_tag: health},
            client_bound=session.health.is_bound(health),
            warnings=warnings,
            window=state.window,
        )
        stage["announcement_lateness_s"] = state.lateness_s
        stages.append(stage)
    run = {
        "id": session.run_id,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(session.started_at)),
        "target": cfg.host,
        "model": session.model,
        "scenario": cfg.scenario,
        "options": cfg.public_dict(),
        "records": [session.describe()],
        "reproducibility": reproducibility(cfg.workload.seed, workers=workers),
    }
    return run_summary(run=run, stages=stages, complete=complete, headline=headline(stages))
