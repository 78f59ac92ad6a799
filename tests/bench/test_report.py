"""docs/performance.md is exactly what bench/report.py generates from bench/results/*.json."""

from __future__ import annotations

import report  # bench/report.py (conftest puts bench/ on the path)


def test_committed_performance_doc_is_generated() -> None:
    current = report.DOC.read_text()
    assert report.generate(current) == current, "docs/performance.md is stale: run bench/report.py"


def test_sections_of_other_owners_are_kept_verbatim() -> None:
    text = (
        "# T\n\nintro\n\n## Capacity\n\nSTALE-TEXT\n\n## Simulator\n\nkeep *this*\n\n| a |\n\n"
        "## Exporter\n\nand this\n"
    )
    kept = report.kept_sections(text)
    assert kept == ["## Simulator\n\nkeep *this*\n\n| a |", "## Exporter\n\nand this"]
    generated = report.generate(text)
    assert generated.endswith("## Simulator\n\nkeep *this*\n\n| a |\n\n## Exporter\n\nand this\n")
    assert "STALE-TEXT" not in generated
