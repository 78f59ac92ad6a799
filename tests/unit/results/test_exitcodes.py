"""The exit-code table and the decision a run makes from its summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from llmload.config.settings import ChecksConfig
from llmload.errors import ConfigError, ResultsError, TargetError
from llmload.export.rundata import upgrade
from llmload.metrics.slo import SloRule, parse_slo
from llmload.results.exitcodes import PRECEDENCE, ExitCode, markdown_table
from llmload.results.verdict import judge


def decide(
    s: dict[str, Any] | None, rules: tuple[SloRule, ...], limit: float | None, client_bound: bool
) -> tuple[ExitCode, list[str]]:
    verdict = judge(None if s is None else upgrade(s), ChecksConfig(rules, limit, client_bound))
    return verdict.code, list(verdict.reasons)


def summary(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads((path / "summary.json").read_bytes())
    return data


def test_the_documented_codes() -> None:
    assert [(c.name, c.value) for c in ExitCode] == [
        ("OK", 0),
        ("ERRORS_OVER_LIMIT", 1),
        ("COULD_NOT_START", 2),
        ("SLO_MISSED", 3),
        ("CLIENT_BOUND", 4),
        ("INCOMPLETE", 5),
        ("WAIT_TIMEOUT", 6),
        ("LOG_STALLED", 7),
        ("CONFIGS_FAILED", 8),
        ("INTERRUPTED", 130),
    ]
    assert PRECEDENCE == (
        ExitCode.INTERRUPTED,
        ExitCode.COULD_NOT_START,
        ExitCode.INCOMPLETE,
        ExitCode.ERRORS_OVER_LIMIT,
        ExitCode.SLO_MISSED,
        ExitCode.CLIENT_BOUND,
    )


def test_user_errors_exit_with_could_not_start() -> None:
    for error in (ConfigError("--slo", "x", "bad"), TargetError("down"), ResultsError("gone")):
        assert error.exit_code == ExitCode.COULD_NOT_START


def test_a_clean_run_is_ok(runs: dict[str, Path]) -> None:
    s = summary(runs["engine-a"])
    assert decide(s, parse_slo("ttft_p99_ms<=1000,output_tok_per_s>=50"), 0.05, True) == (ExitCode.OK, [])


def test_a_missed_slo_names_the_stage_and_the_value(runs: dict[str, Path]) -> None:
    code, reasons = decide(summary(runs["engine-a"]), parse_slo("ttft_p99_ms<=200"), None, False)
    assert code is ExitCode.SLO_MISSED
    assert reasons == [
        "stage 4 (C=128): SLO missed: ttft_p99_ms<=200: 420 (MISS)",
        "stage 5 (C=128): SLO missed: ttft_p99_ms<=200: 450 (MISS)",
    ]


def test_errors_over_the_limit_win_over_slo_and_every_reason_is_kept(runs: dict[str, Path]) -> None:
    code, reasons = decide(summary(runs["engine-b"]), parse_slo("ttft_p99_ms<=200"), 0.001, True)
    assert code is ExitCode.ERRORS_OVER_LIMIT
    assert reasons[0].startswith("stage 4 (C=128): error rate 0.38% > limit 0.10% (http_5xx 1)")
    kinds = [r.split(": ", 1)[1].split(":")[0] for r in reasons]
    assert kinds == [
        "error rate 0.38% > limit 0.10% (http_5xx 1)",
        "error rate 0.38% > limit 0.10% (http_5xx 1)",
        "SLO missed",
        "SLO missed",
        "client-bound, the numbers measure the load generator",
    ]


def test_client_bound_fails_only_when_asked(runs: dict[str, Path]) -> None:
    s = summary(runs["engine-b"])
    assert decide(s, (), None, False) == (ExitCode.OK, [])
    code, reasons = decide(s, (), None, True)
    assert code is ExitCode.CLIENT_BOUND
    assert reasons == ["stage 5 (C=128): client-bound, the numbers measure the load generator"]


def test_error_rate_at_the_limit_passes(runs: dict[str, Path]) -> None:
    s = summary(runs["engine-b"])
    worst = max(stage["error_rate"] for stage in s["stages"])
    assert decide(s, (), worst, False)[0] is ExitCode.OK


def test_nothing_measured_could_not_start(runs: dict[str, Path]) -> None:
    assert decide(None, (), None, False)[0] is ExitCode.COULD_NOT_START
    s = summary(runs["engine-a"])
    for stage in s["stages"]:
        stage["requests"] = {"ok": 0, "failed": 0, "unfinished": 0, "warmup": 3, "drain": 0}
    code, reasons = decide(s, parse_slo("ttft_p99_ms<=1"), 0.0, True)
    assert code is ExitCode.COULD_NOT_START
    assert reasons == ["nothing measured: no request was sent: check -u (users) and -t (run time)"]
    assert decide({"stages": []}, (), None, False)[0] is ExitCode.COULD_NOT_START


def test_markdown_table_lists_every_code_in_order() -> None:
    table = markdown_table()
    lines = table.splitlines()
    assert lines[0] == "| exit code | name | meaning |"
    assert [line.split("|")[1].strip() for line in lines[2:12]] == [
        "0",
        "1",
        "2",
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "130",
    ]
    assert (
        "130 `INTERRUPTED` > 2 `COULD_NOT_START` > 5 `INCOMPLETE` > 1 `ERRORS_OVER_LIMIT` > "
        "3 `SLO_MISSED` > 4 `CLIENT_BOUND`"
    ) in table


def test_the_documents_show_the_one_table() -> None:
    root = Path(__file__).resolve().parents[3]
    for doc in ("README.md", "docs/verdicts.md", "docs/kubernetes.md"):
        text = (root / doc).read_text(encoding="utf-8")
        rows = [line for line in markdown_table().splitlines() if line.startswith("| ")]
        assert all(row in text for row in rows), f"{doc}: regenerate with python -m llmload.results.exitcodes"
