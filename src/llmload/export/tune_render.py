"""``llmload tune``'s answer as console text, Markdown and the head of its report page: one row
per configuration (the parameters that differ, how it ended, its numbers), then the
recommendation line. The comparison under it is ``llmload compare``'s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llmload.export import html as h
from llmload.export.compare_render import md_table, text_table
from llmload.results.choice import Candidate, Choice, Point


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one configuration ended, as its state file records it."""

    name: str
    params: tuple[str, ...]  # the values of the parameters that differ, in ``varied`` order
    status: str  # complete, failed, partial, pending
    verdict: str  # the sweep's verdict line, or why the configuration failed
    minutes: float | None


_HEADERS = (
    "status",
    "peak tok/s",
    "highest level in SLO",
    "tok/s there",
    "best tok/s in SLO",
    "cheapest $/M in SLO",
)


def _at(point: Point | None, value: str) -> str:
    return "-" if point is None else value


def rows(
    varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice
) -> tuple[list[str], list[list[str]]]:
    """The table: a column per varied parameter, then how the configuration did."""
    by_name: dict[str, Candidate] = {c.name: c for c in choice.candidates}
    headers = ["configuration", *varied, *_HEADERS, "minutes", "verdict"]
    out = []
    for o in outcomes:
        c = by_name.get(o.name)
        peak = max((p.output_tok_per_s for p in c.points), default=None) if c else None
        high, best, cheap = (c.highest, c.best, c.cheapest) if c else (None, None, None)
        out.append(
            [
                o.name,
                *o.params,
                o.status,
                h.fmt(peak),
                _at(high, high.where if high else ""),
                _at(high, h.fmt(high.output_tok_per_s) if high else ""),
                _at(best, f"{h.fmt(best.output_tok_per_s)} at {best.where}" if best else ""),
                _at(
                    cheap,
                    f"{cheap.usd_per_m_output_tokens:.2f} at {cheap.where}"
                    if cheap and cheap.usd_per_m_output_tokens is not None
                    else "",
                ),
                "-" if o.minutes is None else f"{o.minutes:.1f}",
                o.verdict,
            ]
        )
    return headers, out


def console(title: str, varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> str:
    headers, body = rows(varied, outcomes, choice)
    return "\n".join([f"llmload tune: {title}", "", *text_table(headers, body), "", choice.line()]) + "\n"


def markdown(title: str, varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> str:
    headers, body = rows(varied, outcomes, choice)
    return (
        "\n".join([f"## llmload tune: {title}", "", f"**{choice.line()}**", "", *md_table(headers, body)])
        + "\n"
    )


def html_intro(varied: Sequence[str], outcomes: Sequence[Outcome], choice: Choice) -> list[str]:
    headers, body = rows(varied, outcomes, choice)
    return [
        h.paragraph(choice.line(), "big"),
        h.heading("Configurations"),
        h.table(headers, body, left=1 + len(varied)),
    ]
