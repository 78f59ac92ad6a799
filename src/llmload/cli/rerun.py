"""A sweep's client-bound levels, run again once with more processes where the machine has cores.

``--processes auto`` plans by an upper bound of the load and a measured capacity, so a level that
still comes out client-bound met something the plan could not see: another process on the
client's cores, a capacity measured on a quieter day. Its numbers measured the client. When
there are free cores for more processes, those levels are run again, once, as a run of their own
(``RUN-ID-rerun``) whose numbers replace them; when there are none, the sweep says so with the
figures. Either way the console says it and ``summary.json`` records it under ``reruns``.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from llmload.cli.child import run_child
from llmload.cli.locust_call import LocustCall
from llmload.cli.processes import Cores
from llmload.errors import ResultsError
from llmload.export.results import ResultsDir
from llmload.export.rundata import read_summary
from llmload.results.summary import Rerun, Summary, to_json
from llmload.results.summary_stage import Stage


def bound_levels(summary: Summary) -> tuple[Stage, ...]:
    """The closed-loop stages flagged client-bound (an open-loop rate is rerun the same way, but
    its stages carry no concurrency to name the level by: left to the user)."""
    return tuple(s for s in summary.stages if s.client_bound and s.concurrency is not None)


def health_text(stage: Stage) -> str:
    worst = max(stage.client_health.values(), key=lambda h: (h.loop_lag_p99_ms or 0.0, h.cpu_percent))
    lag = (
        "no loop-lag sample"
        if worst.loop_lag_p99_ms is None
        else f"loop lag p99 {worst.loop_lag_p99_ms:.1f} ms"
    )
    return f"C={stage.concurrency}: {lag}, CPU {worst.cpu_percent:.0f}% of a core"


def rerun_client_bound(run: LocustCall, host: str, where: Cores, *, prog: str) -> Rerun | None:
    """Run the sweep's client-bound levels again with more processes, or say why not; record it.
    ``run``: the sweep as its child ran it (its run id and processes given)."""
    run_dir = run.results_dir / str(run.run_id)
    try:
        summary = read_summary(run_dir)
    except ResultsError:
        return None  # the run said why it wrote none
    stages = bound_levels(summary)
    if not stages:
        return None
    levels = tuple(sorted({s.concurrency for s in stages if s.concurrency is not None}))
    before = max(1, run.processes or 0)
    health = "; ".join(health_text(s) for s in stages)
    named = ", ".join(f"C={c}" for c in levels)
    more = min(where.free, 2 * before)
    if more <= before:
        kept = f", {where.kept} kept for the server" if where.kept else ""
        why = f"no core is left for another process ({where.usable} usable{kept}, {before} in use)"
        print(
            f"{prog}: {named} {'was' if len(levels) == 1 else 'were'} client-bound with {before} "
            f"process{'es' if before > 1 else ''} ({health}), and {why}: those numbers measured this "
            "client, not the server. Run workers on other machines (--master and --worker) or the "
            "Kubernetes job (docs/kubernetes.md) for them",
            file=sys.stderr,
            flush=True,
        )
        return _record(run_dir, Rerun(levels, before, health, why_not=why))
    rerun_id = f"{run.run_id}-rerun"
    print(
        f"{prog}: {named} client-bound with {before} process{'es' if before > 1 else ''} ({health}): "
        f"running {'it' if len(levels) == 1 else 'them'} again with {more} processes as {rerun_id}",
        flush=True,
    )
    run_child(run.own_run(rerun_id, processes=more, levels=",".join(map(str, levels))).command(host))
    try:
        after = read_summary(run_dir.parent / rerun_id)
    except ResultsError:
        return _record(run_dir, Rerun(levels, before, health, more, "the rerun wrote no summary", rerun_id))
    still = bool(bound_levels(after))
    verdict = "still client-bound: more processes did not help" if still else "not client-bound"
    print(f"{prog}: the rerun with {more} processes is {verdict}; its numbers: {run_dir.parent / rerun_id}")
    return _record(run_dir, Rerun(levels, before, health, more, None, rerun_id, still))


def _record(run_dir: Path, rerun: Rerun) -> Rerun:
    """Add the rerun to the run's ``summary.json`` (``reruns``, docs/summary.md)."""
    summary = read_summary(run_dir)
    ResultsDir(str(run_dir.parent), run_dir.name).write_json(
        "summary.json", to_json(replace(summary, reruns=(*summary.reruns, rerun)))
    )
    return rerun
