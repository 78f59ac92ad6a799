"""The report's sections for what a workload adds: agentic sessions and a tenant mix's fairness.

Beside ``report_page.py``, as ``report_server.py`` and ``report_tradeoffs.py`` are: each section
reads the summary only and is absent when the run has nothing for it.
"""

from __future__ import annotations

from llmload.export import html as h
from llmload.metrics.catalog import stat_header
from llmload.results.summary import Summary


def sessions_section(summary: Summary) -> list[str]:
    """The agent scenario's sessions, and the server's cached share of the prompt per turn."""
    body = []
    for stage in summary.stages:
        s = stage.sessions
        if s is None:
            continue
        d, worst = s.duration_ms, s.worst_ttft_ms
        by_turn = " ".join(f"{turn}:{rate:.0%}" for turn, rate in s.cache_hit_rate_by_turn.items())
        body.append(
            [
                h.fmt(stage.index, 0),
                h.fmt(s.completed, 0),
                h.fmt(s.failed, 0),
                h.fmt(s.unfinished, 0),
                h.fmt(s.completed_per_s, 3),
                h.fmt(None if d is None else d.p50 / 1000, 2),
                h.fmt(None if d is None else d.p90 / 1000, 2),
                h.fmt(None if worst is None else worst.p90, 1),
                h.fmt(None if s.requests_per_session is None else s.requests_per_session.mean, 1),
                by_turn or "-",
            ]
        )
    if not body:
        return []
    headers = [
        "stage",
        "completed",
        "failed",
        "unfinished",
        "sessions/s",
        "duration p50 s",
        "duration p90 s",
        "worst turn " + stat_header("ttft", "p90"),
        "requests each",
        "cache hit by turn",
    ]
    return [
        h.heading("Sessions"),
        h.paragraph(
            "Agentic sessions that started in each stage's window; the worst turn is each "
            "session's slowest TTFT, and the cache hit rate per turn is the server's own count "
            "(stages[i].sessions in summary.json).",
            "note",
        ),
        h.table(headers, body, left=1, css="wide"),
    ]


def fairness_section(summary: Summary) -> list[str]:
    """Per stage of a --tenants run: each tenant's goodput share against its weight."""
    body = [
        [
            h.fmt(stage.index, 0),
            name,
            h.fmt(share.weight_share, 3),
            h.fmt(share.goodput_share, 3),
            h.fmt(share.share_over_weight, 2),
            h.fmt(share.ttft_p99_ms, 2),
            h.fmt(stage.tenants.jain_index, 3),
        ]
        for stage in summary.stages
        if stage.tenants is not None
        for name, share in stage.tenants.tenants.items()
    ]
    if not body:
        return []
    headers = [
        "stage",
        "tenant",
        "weight share",
        "goodput share",
        "share / weight",
        stat_header("ttft", "p99"),
        "Jain's index",
    ]
    return [
        h.paragraph(
            "Fairness: each tenant's share of the goodput (requests meeting its own SLO) against "
            "its weight; Jain's index is 1.0 when every tenant got its weight's share.",
            "note",
        ),
        h.table(headers, body, left=2, css="wide"),
    ]
