"""The report's sections on trade-offs: which levels are worth running (the Pareto frontier)
and what their tokens cost. ``llmload compare`` shows the same frontier table over many runs."""

from __future__ import annotations

from collections.abc import Sequence

from llmload.export import html as h
from llmload.export.series import ParetoPoint, pareto_points
from llmload.export.tables import Row
from llmload.metrics.catalog import by_key, latency_column
from llmload.results.summary import Summary


def pareto_table(points: Sequence[ParetoPoint], with_run: bool) -> str:
    """The levels on either frontier, best interactivity first."""
    kept = sorted(
        (p for p in points if p.on_frontier or p.on_ttft_frontier), key=lambda p: -p.per_user_tok_per_s
    )
    headers = [
        *(["run"] if with_run else []),
        "C",
        "per-user tok/s",
        "aggregate tok/s",
        latency_column("ttft", "p99", " ms").header,
        "frontier",
    ]
    ttft = by_key("ttft").short
    rows = [
        [
            *([p.run] if with_run else []),
            str(p.concurrency),
            h.fmt(p.per_user_tok_per_s),
            h.fmt(p.output_tok_per_s),
            h.fmt(p.ttft_p99_ms),
            " + ".join(n for n, on in (("tok/s", p.on_frontier), (ttft, p.on_ttft_frontier)) if on),
        ]
        for p in kept
    ]
    return h.table(headers, rows, left=1 if with_run else 0)


def pareto_section(rows: Sequence[Row]) -> list[str]:
    points = pareto_points({"this run": rows})
    if len(points) < 2:
        return []
    return [
        h.heading("Pareto frontier"),
        h.paragraph(
            "Levels that no other level beats on both per-user speed (1000 / TPOT p50) and "
            "aggregate output tok/s (tok/s), or on both aggregate tok/s and TTFT p99 (TTFT). "
            "A level on neither is dominated: another one gives every user more and the fleet "
            "more. Plots below; llmload compare draws the frontier over several runs.",
            "note",
        ),
        pareto_table(points, with_run=False),
    ]


def cost_section(summary: Summary) -> list[str]:
    """$ per million tokens and energy per token, per stage, and the cheapest stage under SLOs."""
    stages = [s for s in summary.stages if s.cost is not None or s.gpu is not None]
    if not stages:
        return []
    out = [h.heading("Cost and energy")]
    best = summary.headline.cheapest if summary.headline else None
    if best is not None:
        among = (
            "of the stages that met every SLO" if best.under_slo else "of all stages (the run had no --slo)"
        )
        where = f"C={best.concurrency}" if best.rate_req_per_s is None else f"{best.rate_req_per_s:g} req/s"
        out.append(
            h.paragraph(
                f"Cheapest {among}: stage {best.stage} ({where}) at "
                f"${best.usd_per_m_output_tokens:,.4f} per million output tokens.",
                "big",
            )
        )
    rows = []
    for s in stages:
        cost, gpu = s.cost, s.gpu
        rows.append(
            [
                str(s.index),
                h.fmt(s.concurrency, 0),
                h.fmt(s.output_tok_per_s),
                "-" if cost is None else f"{cost.usd_per_hour:,.2f}",
                h.fmt(cost.usd_per_m_output_tokens if cost else None, 4),
                h.fmt(cost.usd_per_m_input_tokens if cost else None, 4),
                h.fmt(gpu.util_pct.mean if gpu and gpu.util_pct else None),
                h.fmt(gpu.power_w.mean if gpu and gpu.power_w else None, 0),
                h.fmt(gpu.energy_j if gpu else None, 0),
                h.fmt(gpu.joules_per_output_token if gpu else None, 3),
            ]
        )
    headers = (
        "stage",
        "C",
        "out tok/s",
        "$/hour",
        "$/M output",
        "$/M input",
        "GPU util %",
        "power W",
        "energy J",
        "J/output token",
    )
    classes = ["good" if best is not None and s.index == best.stage else "" for s in stages]
    out += [
        h.table(headers, rows, left=0, row_classes=classes, css="wide"),
        h.paragraph(
            "Each $ figure charges the deployment's whole hour to one kind of token, as a price "
            "sheet does (they do not add up). GPU figures come from --gpu-metrics over the stage's "
            "window: utilisation averaged over GPUs, power summed, energy from the exporter's "
            "energy counter.",
            "note",
        ),
    ]
    return out
