"""The e2e tier states every millisecond bound against the run's own noise (tests/support/noise.py).

A bare ``assert ttft_ms < 2`` holds on a quiet machine and fails on a busy one, and each such
failure has cost a whole landing: the check below finds any comparison of a value whose name
says milliseconds with a number literal in an e2e assertion.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
_MS = re.compile(r"_ms\b|\bms\b", re.IGNORECASE)


def _is_number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and node.value != 0


def _upper_bounds(compare: ast.Compare) -> list[tuple[ast.expr, ast.expr]]:
    """(value, bound) for each ``value < bound`` or ``bound > value`` in a chain: a busy machine
    only makes a latency larger, so only an upper bound can fail because of it."""
    sides = [compare.left, *compare.comparators]
    pairs = []
    for op, (a, b) in zip(compare.ops, itertools.pairwise(sides), strict=True):
        if isinstance(op, ast.Lt | ast.LtE):
            pairs.append((a, b))
        elif isinstance(op, ast.Gt | ast.GtE):
            pairs.append((b, a))
    return pairs


def bare_bounds(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            for value, bound in _upper_bounds(compare):
                if _is_number(bound) and _MS.search(ast.unparse(value)):
                    found.append(f"line {node.lineno}: {ast.unparse(compare)}")
    return found


def test_the_check_sees_a_bare_bound_and_lets_a_stated_one_pass() -> None:
    assert bare_bounds("assert stage['ttft_ms']['p50'] < 2") == ["line 1: stage['ttft_ms']['p50'] < 2"]
    assert bare_bounds("assert abs(late_ms - 3) <= 5.0, late_ms") != []
    assert bare_bounds("noise.at_most(stage['ttft_ms']['p50'], 2, 'ttft')") == []
    assert bare_bounds("assert stage['ttft_ms']['p50'] > 0") == []
    assert bare_bounds("assert stage['queue_ms']['p50'] > 200") == []  # a lower bound
    assert bare_bounds("assert abs(rise - DELAY_MS) < 2.0") != []
    assert bare_bounds("assert len(records) >= 8") == []


def test_no_e2e_assertion_holds_a_millisecond_value_to_a_bare_number() -> None:
    found = {
        path.name: hits for path in sorted(E2E.glob("test_*.py")) if (hits := bare_bounds(path.read_text()))
    }
    assert found == {}
