"""The sections of one run's ``report.html``: warnings first, then the answer, then the detail."""

from __future__ import annotations

from collections.abc import Sequence

from llmload.export import html as h
from llmload.export.charts import scripts, styles
from llmload.export.report_server import server_truth_sections
from llmload.export.report_tradeoffs import cost_section, pareto_section
from llmload.export.report_workloads import fairness_section, sessions_section
from llmload.export.rundata import RunData, all_warnings, flatten, verdict_of
from llmload.export.tables import Row, columns
from llmload.metrics.catalog import TABLE_LATENCIES, by_key, latency_column, stat_header
from llmload.protocol.jsonvalue import JSON, obj
from llmload.results.saturation import saturation_text
from llmload.results.summary import Summary, to_json
from llmload.results.summary_stage import ErrorExample, Latency, NamedStage, ReasoningSummary, Stage

_SAMPLE_CHARS = 300  # of a server's error answer in the errors table

# stages.csv's columns; those empty in every stage are left out, and input/total tok/s and p90s
# stay in stages.csv only, so the table fits the page.
_STAGE_TABLE = (
    *columns(
        "index",
        "concurrency",
        "window_s",
        "requests_ok",
        "requests_failed",
        "requests_unfinished",
        "output_tok_per_s",
        "request_per_s",
        "goodput_req_per_s",
    ),
    *(latency_column(metric, q) for metric in TABLE_LATENCIES for q in ("p50", "p99")),
    *columns(
        "decode_tok_per_s",
        "tokens_per_event",
        "images_per_request",
        "image_bytes_per_request",
        "server_acceptance_length",
        "server_acceptance_rate",
        "client_bound",
    ),
)


def _header(run: RunData) -> list[str]:
    info = run.summary.run
    parts = [
        f"target {info.target or '?'}",
        f"model {info.model or '?'}",
        f"scenario {info.scenario or '?'}",
        f"started {info.started_at or '?'}",
    ]
    return [f"<h1>llmload report · run {h.esc(run.run_id)}</h1>", h.paragraph(" · ".join(parts), "sub")]


def _headline(summary: Summary) -> list[str]:
    head = summary.headline
    if not head:
        return []
    peak_c = head.peak_concurrency
    rows = [
        ("single-stream output tok/s (C=1)", h.fmt(head.single_stream_tok_per_s)),
        (
            "peak output tok/s",
            h.fmt(head.peak_tok_per_s) + ("" if peak_c is None else f" at C={peak_c}"),
        ),
        (
            "per-stream speed halves at",
            "-" if head.half_speed_concurrency is None else f"C={head.half_speed_concurrency}",
        ),
        ("saturation", saturation_text(head.saturation)),
    ]
    out = [h.heading("Headline"), h.table(("", "value"), rows, css="big")]
    if not head.levels:
        return out
    repeated = any(lv.repeats > 1 for lv in head.levels)
    columns = ["concurrency", "output tok/s", "repeat spread", "decode tok/s per stream"]
    if repeated:
        columns += ["repeats", "95% interval of tok/s", "noisy (interval over ±5%)"]
    body = []
    for lv in head.levels:
        cells = [
            str(lv.concurrency),
            h.fmt(lv.output_tok_per_s),
            _spread(lv.spread),
            h.fmt(lv.decode_tok_per_s),
        ]
        if repeated:
            tput = lv.intervals.get("output_tok_per_s")
            ci = (
                "-"
                if tput is None
                else f"{h.fmt(tput.low)} to {h.fmt(tput.high)} (±{100 * (tput.relative or 0):.1f}%)"
            )
            cells += [str(lv.repeats), ci, ", ".join(lv.noisy) or "-"]
        body.append(cells)
    out.append(h.table(columns, body, row_classes=["bad" if lv.noisy else "" for lv in head.levels]))
    return out


def _spread(spread: tuple[float, float]) -> str:
    if spread[0] == spread[1]:
        return "-"
    return f"{h.fmt(spread[0])} to {h.fmt(spread[1])}"


def _stages(rows: Sequence[Row]) -> list[str]:
    shown = [
        c for c in _STAGE_TABLE if c.key == "client_bound" or any(r.get(c.key) is not None for r in rows)
    ]
    body = [[h.fmt(r.get(c.key), c.digits) for c in shown] for r in rows]
    classes = ["bad" if r.get("client_bound") else "" for r in rows]
    return [
        h.heading("Stages"),
        h.paragraph(
            "Latencies in ms, over requests sent in each stage's measured window; "
            "the full table, with p90, is stages.csv. Highlighted: client-bound stages.",
            "note",
        ),
        h.table([c.header for c in shown], body, left=0, row_classes=classes, css="wide"),
    ]


# (catalog key, its latency) pairs: a table's latency columns, headed by the catalog's names.
Latencies = tuple[tuple[str, Latency | None], ...]


def _cells(latencies: Latencies, stats: Sequence[str]) -> list[str]:
    """Each (catalog key, latency)'s ``stats``, with the catalog's decimals for it."""
    return [
        h.fmt(None if latency is None else latency.quantile(stat), by_key(metric).digits)
        for metric, latency in latencies
        for stat in stats
    ]


def _named_latencies(part: NamedStage) -> Latencies:
    return (("ttft", part.ttft_ms), ("tpot", part.tpot_ms), ("e2e", part.e2e_ms))


def _by_name(summary: Summary) -> list[str]:
    """A scenario's named requests, stage by stage (absent when no request was named)."""
    body: list[list[str]] = []
    latencies: Latencies = ()
    for stage in summary.stages:
        for name, part in stage.by_name.items():
            r = part.requests
            latencies = _named_latencies(part)
            body.append(
                [
                    h.fmt(stage.index, 0),
                    name,
                    h.fmt(r.ok, 0),
                    h.fmt(r.failed, 0),
                    h.fmt(r.unfinished, 0),
                    h.fmt(part.output_tok_per_s, 1),
                    h.fmt(part.input_tok_per_s, 1),
                    h.fmt(part.request_per_s, 2),
                    *_cells(latencies, ("p50", "p99")),
                ]
            )
    if not body:
        return []
    headers = ["stage", "name", "ok", "failed", "unfinished", "out tok/s", "in tok/s", "req/s"]
    # every row pairs the same keys: the last one names the columns
    headers += [stat_header(metric, q) for metric, _latency in latencies for q in ("p50", "p99")]
    return [
        h.heading("Requests by name"),
        h.paragraph(
            "The scenario's named requests (name=), and each tenant's (tenant:NAME, --tenants), "
            "counted over its stage's measured window as the stage is; latencies in ms. "
            "summary.json has every metric (stages[i].by_name).",
            "note",
        ),
        h.table(headers, body, left=2, css="wide"),
        *fairness_section(summary),
    ]


def _reasoning_latencies(stage: Stage, r: ReasoningSummary) -> Latencies:
    return (
        ("ttft", stage.ttft_ms),
        ("ttfot", stage.ttfot_ms),
        ("tpot_reasoning", r.tpot_reasoning_ms),
        ("tpot_answer", r.tpot_answer_ms),
    )


def _reasoning(summary: Summary) -> list[str]:
    """A reasoning model's thinking beside its answer, in the stages where requests reasoned."""
    body: list[list[str]] = []
    latencies: Latencies = ()
    for stage in summary.stages:
        r = stage.reasoning
        if r is None:
            continue
        latencies = _reasoning_latencies(stage, r)
        cells = [h.fmt(stage.index, 0), h.fmt(r.requests, 0), h.fmt(r.reasoning_tokens, 0)]
        cells += [
            h.fmt(r.answer_tokens, 0),
            h.fmt(None if r.reasoning_share is None else 100 * r.reasoning_share, 1),
            *_cells(latencies, ("p50",)),
        ]
        body.append(cells)
    if not body:
        return []
    headers = ["stage", "requests", "reasoning tokens", "answer tokens", "reasoning %"]
    headers += [stat_header(metric, "p50") for metric, _latency in latencies]  # as in _by_name
    return [
        h.heading("Reasoning"),
        h.paragraph(
            "Requests whose answers streamed reasoning_content before their content: TTFT is the "
            "first thinking token, TTFOT the first answer token; latencies in ms.",
            "note",
        ),
        h.table(headers, body, left=1, css="wide"),
    ]


def _spec_decode(rows: Sequence[Row]) -> list[str]:
    rows = [
        r
        for r in rows
        if r.get("server_acceptance_length") is not None or r.get("server_acceptance_rate") is not None
    ]
    if not rows:
        return []
    return [
        h.heading("Speculative decoding"),
        h.paragraph(
            "The server's acceptance beside the client's tokens per event. With one event per "
            "decode step, tokens per event should track the mean acceptance length; if it "
            "stays near 1 the server splits its steps into single-token events.",
            "note",
        ),
        h.table(
            ("stage", "C", "client tokens/event", "server mean acceptance length", "server acceptance rate"),
            [
                (
                    str(r.get("index")),
                    str(r.get("concurrency")),
                    h.fmt(r.get("tokens_per_event"), 2),
                    h.fmt(r.get("server_acceptance_length"), 2),
                    h.fmt(r.get("server_acceptance_rate"), 3),
                )
                for r in rows
            ],
            left=0,
        ),
    ]


def _key_values(title: str, value: JSON, skip: tuple[str, ...] = ()) -> list[str]:
    pairs = [(k, v) for k, v in flatten(value) if k and k.split(".")[0] not in skip]
    if not pairs:
        return [h.heading(title), h.paragraph("Nothing recorded.", "note")]
    return [h.heading(title), h.table(("key", "value"), pairs, left=2)]


def _errors(summary: Summary) -> list[str]:
    """Failure kinds by stage (every phase), with the HTTP status and one answer per kind."""
    stages = summary.stages
    by_stage = [(s.name, s.attempts.errors or s.errors) for s in stages]
    kinds = sorted({kind for _name, errors in by_stage for kind in errors})
    if not kinds:
        return []
    samples: dict[str, ErrorExample] = {}
    for stage in stages:
        for kind, sample in stage.error_samples.items():
            samples.setdefault(kind, sample)
    rows = []
    for kind in kinds:
        found = samples.get(kind)
        message = found.message if found else ""
        if len(message) > _SAMPLE_CHARS:
            message = message[:_SAMPLE_CHARS] + "..."
        rows.append(
            [
                kind,
                *(h.fmt(errors.get(kind, 0)) for _n, errors in by_stage),
                h.fmt(found.status if found else None),
                message,
            ]
        )
    table = h.table(["kind", *(name for name, _e in by_stage), "HTTP status", "a server answer"], rows)
    return [
        h.heading("Errors"),
        h.paragraph(
            "Failed requests of every phase (warm-up and drain included) by kind and "
            "stage; each kind with the first answer the server gave for it. Every "
            "failed request is in requests.jsonl.",
            "note",
        ),
        table,
    ]


def render_report(run: RunData, rows: Sequence[Row], charts: str) -> str:
    """The page; ``charts`` is export/charts.py's block (the charts' place and their data)."""
    info = obj(to_json(run.summary.run))
    warnings = all_warnings(run.summary)
    body = [
        *_header(run),
        h.verdict_banner(verdict_of(run.summary), warnings=len(warnings)),
        h.warnings_box(warnings),
        *_headline(run.summary),
        *_stages(rows),
        charts,
        *_by_name(run.summary),
        *server_truth_sections(run.summary),
        *pareto_section(rows),
        *cost_section(run.summary),
        *_reasoning(run.summary),
        *sessions_section(run.summary),
        *_errors(run.summary),
        *_spec_decode(rows),
        *_key_values("Server fingerprint", run.server, skip=("warnings",)),
        *_key_values("Run", {k: v for k, v in info.items() if k not in ("reproducibility", "records")}),
        *_key_values("Reproducibility", info.get("reproducibility") or {}),
    ]
    return h.page(f"llmload report {run.run_id}", body, scripts=scripts(), css=styles())
