"""``llmload tune``'s answer as console text, Markdown and the head of its report page: one row
per configuration (the parameters that differ, how it ended, its numbers), then the
recommendation line. Tokens per chunk and the server's acceptance rate are those of the peak
level: where a drafter (speculative decoding) pays, or does not. The comparison under it is
``llmload compare``'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llmload.export import html as h
from llmload.export.compare_render import Mark, md_table, text_table
from llmload.results.choice import Candidate, Choice, Point
from llmload.results.drift import Drift


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one configuration ended, as its state file records it."""

    name: str
    params: tuple[str, ...]  # the values of the parameters that differ, in ``varied`` order
    status: str  # complete, failed, partial, pending
    verdict: str  # the sweep's verdict line, or why the configuration failed
    minutes: float | None
    drift: tuple[Drift | None, Drift | None] | None = None  # under load, against the first; None: no probes


_HEADERS = (
    "status",
    "single-stream tok/s",
    "peak tok/s",
    "tok/chunk",
    "accept",
    "highest level in SLO",
    "tok/s there",
    "best tok/s in SLO",
    "cheapest $/M in SLO",
)


def _at(point: Point | None, value: str) -> str:
    return "-" if point is None else value


def _drift(o: Outcome) -> tuple[str, str]:
    under, against = o.drift or (None, None)
    return ("-" if under is None else under.text(), "-" if against is None else against.text())


def examples(outcomes: Sequence[Outcome]) -> list[str]:
    """One differing answer per configuration whose answers changed."""
    out = []
    for o in outcomes:
        for what, d in zip(("under load", "vs the first"), o.drift or (), strict=False):
            if d is not None and d.example:
                out.append(f"{o.name}, {what}: {d.example}")
    return out


def rows(
    varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice
) -> tuple[list[str], list[list[str]]]:
    """The table: a column per varied parameter, then how the configuration did."""
    by_name: dict[str, Candidate] = {c.name: c for c in choice.candidates}
    probed = any(o.drift is not None for o in outcomes)
    first = outcomes[0].name if outcomes else ""
    drift_headers = ["answers changed under load", f"answers vs {first}"] if probed else []
    headers = ["configuration", *varied, *_HEADERS, *drift_headers, "minutes", "verdict"]
    out = []
    for o in outcomes:
        c = by_name.get(o.name)
        peak = c.peak if c else None
        high, best, cheap = (c.highest, c.best, c.cheapest) if c else (None, None, None)
        out.append(
            [
                o.name,
                *o.params,
                o.status,
                h.fmt(c.single_stream_tok_per_s if c else None),
                h.fmt(peak.output_tok_per_s if peak else None),
                h.fmt(peak.tokens_per_chunk if peak else None, 2),
                h.fmt(peak.acceptance_rate if peak else None, 2),
                _at(high, high.where if high else ""),
                _at(high, h.fmt(high.output_tok_per_s) if high else ""),
                _at(best, f"{h.fmt(best.output_tok_per_s)} at {best.where}" if best else ""),
                _at(
                    cheap,
                    f"{cheap.usd_per_m_output_tokens:.2f} at {cheap.where}"
                    if cheap and cheap.usd_per_m_output_tokens is not None
                    else "",
                ),
                *(_drift(o) if probed else ()),
                "-" if o.minutes is None else f"{o.minutes:.1f}",
                o.verdict,
            ]
        )
    return headers, out


def console(title: str, varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> str:
    headers, body = rows(varied, outcomes, choice)
    diffs = examples(outcomes)
    lines = [
        f"llmload tune: {title}",
        "",
        *text_table(headers, body, left=(*range(1 + len(varied)), len(headers) - 1)),
        "",
    ]
    lines += ["answers that changed:", *(f"  {d}" for d in diffs), ""] if diffs else []
    return "\n".join([*lines, choice.line()]) + "\n"


def markdown(title: str, varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> str:
    headers, body = rows(varied, outcomes, choice)
    diffs = examples(outcomes)
    lines = [f"## llmload tune: {title}", "", f"**{choice.line()}**", "", *md_table(headers, body)]
    lines += ["", "Answers that changed:", "", *(f"- `{d}`" for d in diffs)] if diffs else []
    return "\n".join(lines) + "\n"


def html_intro(varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> list[str]:
    headers, body = rows(varied, outcomes, choice)
    diffs = examples(outcomes)
    return [
        h.paragraph(choice.line(), "big"),
        h.heading("Configurations"),
        h.table(headers, body, left=1 + len(varied)),
        *([h.heading("Answers that changed"), *(h.paragraph(d) for d in diffs)] if diffs else []),
    ]


def marks(choice: Choice) -> list[Mark]:
    """The picks as points on the comparison's throughput chart (levels of concurrency only:
    a rate-driven point has no place on that axis)."""
    out = []
    for what, pick in (("best in SLO", choice.by_throughput), ("cheapest in SLO", choice.by_cost)):
        level = None if pick is None else pick.point.concurrency
        if pick is not None and level is not None:
            out.append(
                (f"{what}: {pick.name} at {pick.point.where}", float(level), pick.point.output_tok_per_s)
            )
    return out
