"""The catalog is the only place that lists the stage latencies, names them or lays out a column.

Each module of ``src/llmload`` is read as code (its syntax tree, docstrings and comments left
out), so a copy of the latency keys, a header typed out as ``"TTFT p50"`` or a column written as
a bare ``(header, key, digits)`` tuple fails here, whichever module it appears in.
"""

from __future__ import annotations

import ast
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path

import pytest

from llmload.core.phases import Phase, Window
from llmload.core.record import RequestRecord
from llmload.export.tables import STAGE_COLUMNS
from llmload.metrics import derive
from llmload.metrics.aggregate import StageStats
from llmload.metrics.catalog import (
    CATALOG,
    CONSOLE_LATENCIES,
    GOODPUT,
    LATENCY_KEYS,
    PER_REQUEST,
    PLOTTED_LATENCIES,
    TABLE_LATENCIES,
    by_key,
    latency_column,
    latency_stat,
)
from llmload.metrics.classic import SPECS, Buckets, ClassicStats
from llmload.results.summary_stage import Stage

MS = 1_000_000

SRC = Path(__file__).resolve().parents[3] / "src" / "llmload"
CATALOG_FILE = SRC / "metrics" / "catalog.py"
MODULES = sorted(p for p in SRC.rglob("*.py") if p != CATALOG_FILE)

KEYS = frozenset(LATENCY_KEYS)
# Every name a millisecond metric goes by; a bare lowercase one ("connect", "chunk gap") is an
# ordinary word too, so only acronym-bearing ones are flagged alone, and all with a statistic.
NAMES = sorted({n for m in CATALOG if m.unit == "ms" for n in (m.title, m.short)}, key=len, reverse=True)
_NAME = "|".join(map(re.escape, NAMES))
HEADER = re.compile(rf"^(?:{_NAME}) (?:p\d{{2,4}}|mean|min|max)(?: ms| \(ms\))?$")
BARE = re.compile(rf"^(?:{'|'.join(re.escape(n) for n in NAMES if n != n.lower())})$")


def _docstrings(tree: ast.Module) -> set[int]:
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _strings(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Every string literal of the code, f-strings' literal parts included, but docstrings."""
    skip = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            yield node.lineno, node.value


def _constants(node: ast.expr) -> list[object] | None:
    """A literal's constant values, one level of nested tuples flattened; None if not all constant."""
    if isinstance(node, ast.Constant):
        return [node.value]
    if isinstance(node, ast.Tuple) and all(isinstance(e, ast.Constant) for e in node.elts):
        return [e.value for e in node.elts if isinstance(e, ast.Constant)]
    return None


def _collections(tree: ast.Module) -> Iterator[ast.Tuple | ast.List | ast.Set]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            yield node


def key_copies(tree: ast.Module) -> list[int]:
    """Lines of literals listing two stage latencies or more: ``("ttft", "itl")``, or
    ``(("TTFT", "ttft"), ("ITL", "itl"))``. One key beside its value is where it is measured."""
    out = []
    for node in _collections(tree):
        parts = [_constants(e) for e in node.elts]
        if all(p is not None for p in parts):
            hits = sum(
                1 for p in parts if p is not None and KEYS.intersection(v for v in p if isinstance(v, str))
            )
            if hits >= 2:
                out.append(node.lineno)
    return out


def column_tuples(tree: ast.Module) -> list[int]:
    """Lines of tables of columns written as bare (str, str, int) tuples, in either order."""
    out = []
    for node in _collections(tree):
        shapes = [[type(v) for v in p] if (p := _constants(e)) is not None else None for e in node.elts]
        if len(shapes) >= 2 and all(s == [str, str, int] for s in shapes):
            out.append(node.lineno)
    return out


def titles(tree: ast.Module) -> list[tuple[int, str]]:
    """Metric names typed out as a header (``"TTFT p50"``, ``" · E2E p50 "``) or alone (``"TTFT"``)."""
    return [
        (line, text)
        for line, text in _strings(tree)
        if HEADER.match(bare := text.strip(" ·")) or BARE.match(bare)
    ]


Check = Callable[[ast.Module], Sequence[object]]


def _findings(check: Check) -> list[str]:
    found = []
    for path in MODULES:
        hits = check(ast.parse(path.read_text(encoding="utf-8")))
        found += [f"{path.relative_to(SRC)}:{hit}" for hit in hits]
    return found


def test_no_module_copies_the_latency_keys() -> None:
    assert not _findings(key_copies), "list the latencies in llmload/metrics/catalog.py and import them"


def test_no_module_types_out_a_metric_name() -> None:
    assert not _findings(titles), "name metrics with catalog.stat_header / by_key(key).short"


def test_columns_are_one_type() -> None:
    assert not _findings(column_tuples), "write columns as catalog.Column (or pick them from tables)"


@pytest.mark.parametrize(
    ("source", "check"),
    [
        ('X = ("ttft", "ttfot", "itl")', key_copies),
        ('X = (("TTFT", "ttft"), ("ITL", "itl"))', key_copies),
        ("for m in ['tpot', 'e2e']: pass", key_copies),
        ('X = (("stage", "index", 0), ("C", "concurrency", 0))', column_tuples),
        ('X = ("TTFT p50", "ttft_p50_ms", 1)', titles),
        ('x = f" · E2E p50 {y} ms"', titles),
        ('x = "TTFT p99 (ms)"', titles),
        ('x = "ITL"', titles),
    ],
)
def test_the_checks_catch_what_they_are_for(source: str, check: Check) -> None:
    assert check(ast.parse(source))


@pytest.mark.parametrize(
    ("source", "check"),
    [
        ('X = (("ttft", derive.ttft_ns(r)), ("e2e", derive.e2e_ns(r)))', key_copies),  # measured
        ('X = ("ttft_p50_ms", "tpot_p99_ms")', key_copies),  # columns picked by key
        ('"""TTFT p50 in a docstring."""', titles),
        ('x = "Pareto frontier: TTFT p99 against throughput"', titles),  # prose
        ('x = "connect"', titles),
    ],
)
def test_the_checks_leave_the_rest(source: str, check: Check) -> None:
    assert not check(ast.parse(source))


def test_every_stage_latency_is_a_summary_field_and_a_histogram() -> None:
    latency_fields = {f.name for f in fields(Stage) if f.name.endswith("_ms") and f.type == "Latency | None"}
    assert latency_fields == {by_key(k).summary_key for k in LATENCY_KEYS}
    assert set(StageStats().hist) >= KEYS


def test_a_per_request_latency_is_read_from_its_catalog_entry() -> None:
    # Its entry says how one request's value is read; nothing else lists it for the fold.
    per_request = {by_key(k) for k in LATENCY_KEYS if by_key(k).scope == "request"}
    assert per_request and all(m.sample is not None for m in per_request)
    assert {key for key, _ in PER_REQUEST} == {m.key for m in CATALOG if m.sample is not None}
    assert {key for key, _ in GOODPUT} == {"ttft", "ttfot", "tpot", "e2e"}


def test_the_fold_and_the_exporter_take_each_request_metric_from_the_catalog() -> None:
    r = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=MS, sent_ns=2 * MS)
    r.event_ns, r.event_tokens = array("q", [5 * MS, 9 * MS, 13 * MS]), array("l", [1, 1, 1])
    r.first_token_ns = r.first_output_ns = 5 * MS
    r.last_token_ns, r.done_ns = 13 * MS, 14 * MS
    r.output_tokens, r.prompt_tokens, r.connect_start_ns, r.connected_ns = 3, 7, 0, MS
    stats, classic = StageStats(), ClassicStats()
    stats.add(r, Window(t0_ns=0))
    classic.add(r)
    m = derive.measure(r)
    for key, sample in PER_REQUEST:
        value = sample(r, m)
        assert value is not None, key  # this record defines every one
        assert stats.hist[key].count == 1 and stats.hist[key].total == round(value), key
        exported = [spec for spec in SPECS if spec.metric == key and spec.key == spec.source]
        for spec in exported:
            assert classic.sums[spec.source] == round(value), key
    assert {key for key, _ in PER_REQUEST} >= {"ttft", "e2e", "connect", "queue", "output_tokens"}


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.key)
def test_every_exported_histogram_has_the_catalogs_help(spec: Buckets) -> None:
    assert by_key(spec.metric).help.endswith(".")


def test_where_latencies_are_shown() -> None:
    for shown in (CONSOLE_LATENCIES, TABLE_LATENCIES, PLOTTED_LATENCIES):
        assert len(set(shown)) == len(shown) and set(shown) <= KEYS
    # plots and comparisons read stages.csv, so what they show must be a column of it
    assert set(PLOTTED_LATENCIES) <= set(TABLE_LATENCIES)
    for metric in TABLE_LATENCIES:
        assert latency_column(metric, "p99").key in STAGE_COLUMNS


@pytest.mark.parametrize("metric", LATENCY_KEYS)
def test_columns_name_and_split_back(metric: str) -> None:
    column = latency_column(metric, "p99", " ms")
    assert latency_stat(column.key) == (metric, "p99")
    assert column.header == f"{by_key(metric).short} p99 ms"
    assert latency_stat("output_tok_per_s") is None


def test_short_names_are_distinct() -> None:
    shorts = [by_key(k).short for k in LATENCY_KEYS]
    assert len(set(shorts)) == len(shorts)
    for metric in CATALOG:
        assert len(metric.short) <= len(metric.title)
