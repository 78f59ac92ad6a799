"""Every timing bound of the suite goes through the timing judge (tests/support/timing).

A bare ``assert ttft_ms < 2`` holds on a quiet machine and fails on a busy one, and each such
failure has cost a whole landing; one that widens itself by the client's own lag hides the very
regression it should catch. The check below reads every test module that can measure real time
(the integration, e2e, k8s and bench tiers, their support code, and any unit module that reads a
clock) and flags, inside an ``assert``:

- an ordering of a value whose name says time, a rate, a lateness or a latency (``ttft``,
  ``_ms``, ``_ns``, ``_s``, ``elapsed``, ``tok_per_s``, ...) against anything but zero;
- ``pytest.approx(..., abs=...)`` or ``rel=...`` beside such a value;
- ``abs(a - b)`` against anything but zero: a difference held to a slack;
- a bound that adds or subtracts a number (``model + 6``, ``client + 32``): a slack on a measure.

Each such assertion moves to the judge, or says on its line (or the line above) why its number
is not a timing claim, in a comment that starts ``# not timing:``.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
TIERS = ("integration", "e2e", "k8s", "bench", "support")
JUDGE = TESTS / "support" / "timing"
EXEMPT = "# not timing:"
TIMING = re.compile(
    r"(_ms|_ns|_s|_seconds|_per_s)\b|\b(ms|ns|seconds|elapsed|took|late|lateness|latency|latencies|"
    r"ttft|ttfot|itl|tpot|e2e|duration|span|gap|gaps|lag|tok_per_s|req_per_s|rate|stall|deadline)\b",
    re.IGNORECASE,
)
CLOCK = re.compile(r"perf_counter|monotonic\(|time\.time\(|\bsleep\((?!0\))")


def _zero(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and node.value in (0, 0.0, None)


def _timing(node: ast.expr) -> bool:
    return bool(TIMING.search(ast.unparse(node)))


def _slack(node: ast.expr) -> bool:
    """``x + 6``, ``x - 0.5``, ``2 * 16 + x``: a bound with a number added or taken away."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)):
        return False
    sides = (node.left, node.right)
    numbers = [
        n
        for n in sides
        if not any(isinstance(x, ast.Name | ast.Attribute | ast.Subscript | ast.Call) for x in ast.walk(n))
    ]
    return bool(numbers) and len(numbers) < 2 and not any(_zero(n) for n in numbers)


def _approx_with_tolerance(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith("approx")
        and any(k.arg in ("abs", "rel") for k in node.keywords)
    )


def _why(compare: ast.Compare) -> str | None:
    sides = [compare.left, *compare.comparators]
    for op, (a, b) in zip(compare.ops, itertools.pairwise(sides), strict=True):
        if isinstance(op, ast.Eq | ast.NotEq):
            if any(_approx_with_tolerance(s) for s in (a, b)) and (_timing(a) or _timing(b)):
                return "approx with a tolerance"
            continue
        if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
            continue
        if _zero(a) or _zero(b):
            continue
        if any(isinstance(s, ast.Call) and ast.unparse(s.func) == "abs" for s in (a, b)):
            return "a difference held to a slack"
        if _slack(a) or _slack(b):
            return "a slack added to a bound"
        if _timing(a) or _timing(b):
            return "a timing value ordered against a bound"
    return None


def bare_bounds(source: str) -> list[str]:
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Assert):
            continue
        end = node.end_lineno or node.lineno
        said = "\n".join(lines[max(0, node.lineno - 2) : end])
        if EXEMPT in said:
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            why = _why(compare)
            if why:
                found.append(f"line {node.lineno}: {ast.unparse(compare)} ({why})")
    return found


def _modules() -> list[Path]:
    paths = [p for tier in TIERS for p in sorted((TESTS / tier).rglob("*.py"))]
    paths += [p for p in sorted((TESTS / "unit").rglob("test_*.py")) if CLOCK.search(p.read_text())]
    return [p for p in paths if JUDGE not in p.parents and p.name != "__init__.py"]


def test_the_check_sees_every_kind_of_bare_bound() -> None:
    assert bare_bounds("assert stage['ttft_ms']['p50'] < 2") != []
    assert bare_bounds("assert abs(late_ms - 3) <= 5.0, late_ms") != []
    assert bare_bounds("assert stage['itl_ms']['p50'] == pytest.approx(20, abs=1)") != []
    assert bare_bounds("assert tok_per_s == approx(truth, rel=0.02)") != []
    assert bare_bounds("assert late_ns < 5_000_000") != []
    assert bare_bounds("assert elapsed < LIMIT") != []  # a bound held in a name
    assert bare_bounds("assert gap <= model + 6") != []
    assert bare_bounds("assert abs(server_tokens - client_tokens) <= 32") != []  # a count
    assert bare_bounds("assert server <= client + 2 * 16") != []


def test_the_check_lets_through_what_is_not_a_timing_bound() -> None:
    assert bare_bounds("judge.at_most(stage['ttft_ms']['p50'], 2, Stat.MEDIAN, 'ttft')") == []
    assert bare_bounds("assert stage['ttft_ms']['p50'] > 0") == []
    assert bare_bounds("assert len(records) >= 8") == []
    assert bare_bounds("assert stage['requests']['failed'] == 0") == []
    assert bare_bounds("assert quantile == pytest.approx(20)") == []  # exact, to rounding
    assert (
        bare_bounds("# not timing: a floor of a latency, which noise only lengthens\nassert gap_ms >= 290")
        == []
    )
    assert bare_bounds("assert ttft_ms >= 300  # not timing: noise only lengthens a latency") == []


def test_no_test_holds_a_timing_value_to_a_bare_bound() -> None:
    found = {
        str(path.relative_to(TESTS)): hits for path in _modules() if (hits := bare_bounds(path.read_text()))
    }
    assert found == {}, "\n".join(f"{path}: {hit}" for path, hits in found.items() for hit in hits)
