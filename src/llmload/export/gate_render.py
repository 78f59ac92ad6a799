"""``llmload gate``'s result three ways: a terminal table, Markdown for a pull request comment
or a CI step summary, and JUnit XML (one test case per cell) for a CI system's test view."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from llmload.export.compare_render import text_table
from llmload.export.markdown import table
from llmload.results.gate import Cell, CellOutcome, GateCode, GateResult

_HEADERS = ("metric", "level", "baseline", "this run", "change", "limit", "p (Holm)", "verdict")
_WORD = {
    GateCode.PASS: "PASS",
    GateCode.REGRESSION: "REGRESSION",
    GateCode.INSUFFICIENT_DATA: "INSUFFICIENT DATA",
}


def _spread(values: Sequence[float]) -> str:
    if not values:
        return "-"
    mean = math.fsum(values) / len(values)
    if len(values) < 2:
        return f"{mean:.4g} (n=1)"
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return f"{mean:.4g} ±{sd:.2g} (n={len(values)})"


def _change(cell: Cell) -> str:
    if cell.worse_by is None:
        return "-"
    return f"{cell.worse_by:+.1%} {'worse' if cell.worse_by > 0 else 'better'}"


def _row(cell: Cell) -> list[str]:
    p = "-" if cell.p_adjusted is None else f"{cell.p_adjusted:.2g}"
    verdict = cell.outcome.value + (f": {cell.why}" if cell.outcome is CellOutcome.INSUFFICIENT else "")
    return [
        cell.metric,
        cell.level,
        _spread(cell.baseline),
        _spread(cell.candidate),
        _change(cell),
        f"{cell.limit:.1%}",
        p,
        verdict,
    ]


def _word(result: GateResult) -> str:
    if result.waiver is not None and any(c.outcome is CellOutcome.REGRESSION for c in result.cells):
        return "ACCEPTED REGRESSION"
    return _WORD.get(result.code, "RUN FAILED")


def _title(result: GateResult) -> str:
    run = result.candidate
    return (
        f"llmload gate: {_word(result)}: run {run.run_id} ({run.server.name}) against {result.baseline} "
        f"({len(result.baseline_runs)} run(s)), key {run.key.hash}"
    )


def text(result: GateResult) -> str:
    out = [_title(result), ""]
    if result.cells:
        out += [*text_table(_HEADERS, [_row(c) for c in result.cells], left=(0, 7)), ""]
    out += [f"warning: {w}" for w in result.warnings]
    out += [f"llmload gate: {result.line}"]
    return "\n".join(out) + "\n"


def markdown(result: GateResult) -> str:
    run = result.candidate
    out = [f"### {_title(result).removeprefix('llmload gate: ')}", ""]
    out += [f"`{run.key.describe()}`", ""]
    if result.cells:
        out += [*table(_HEADERS, [_row(c) for c in result.cells]), ""]
    out += [f"> **warning**: {w}" for w in result.warnings]
    out += [f"**{result.line}**"]
    if result.baseline_runs:
        out += ["", "Baseline runs: " + ", ".join(f"`{r.run_id}`" for r in result.baseline_runs)]
    return "\n".join(out) + "\n"


def junit(result: GateResult) -> str:
    """One test case per cell: a regression fails, insufficient data is skipped, and a run that
    failed its own checks is one failing case, so a CI view never shows it green."""
    suite = ET.Element("testsuite", name="llmload gate", tests="0", failures="0", skipped="0")
    cases = [(c.name, c.outcome.value, _row(c)) for c in result.cells]
    if result.code is GateCode.RUN_FAILED or not result.cells:
        cases = [
            (
                "the run",
                "failed" if result.code is GateCode.RUN_FAILED else "insufficient data",
                [result.line],
            )
        ]
    failures = skipped = 0
    for name, outcome, row in cases:
        case = ET.SubElement(
            suite, "testcase", classname=f"llmload.gate.{result.candidate.key.hash}", name=name
        )
        message = " · ".join(row)
        if outcome == "regression" and result.waiver is not None:
            ET.SubElement(case, "system-out").text = f"accepted: {result.waiver}"
        elif outcome in ("regression", "failed"):
            ET.SubElement(case, "failure", message=message).text = result.line
            failures += 1
        elif outcome == "insufficient data":
            ET.SubElement(case, "skipped", message=message)
            skipped += 1
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("skipped", str(skipped))
    ET.indent(suite)
    return ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"
