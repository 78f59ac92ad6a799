"""SLO rules: parsing (errors name --slo and the clause), per-stage evaluation, goodput predicate."""

from __future__ import annotations

from array import array
from typing import Any

import pytest

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.errors import ConfigError
from llmload.metrics import derive
from llmload.metrics.histogram import LogHistogram
from llmload.metrics.slo import SloRule, parse_max_error_rate, parse_slo, request_meets, request_ms
from llmload.results.slo import evaluate
from llmload.results.summary_stage import Stage
from tests.support import summaries

MS = 1_000_000


def stage(**overrides: Any) -> Stage:
    base: dict[str, Any] = {
        "index": 0,
        "concurrency": 8,
        "output_tok_per_s": 1200.0,
        "error_rate": 0.002,
        "ttft_ms": {
            "count": 100,
            "mean": 90.0,
            "min": 20.0,
            "p50": 80.0,
            "p90": 150.0,
            "p95": 170.0,
            "p99": 190.0,
            "p999": 240.0,
            "max": 260.0,
        },
        "tpot_ms": {
            "count": 100,
            "mean": 21.0,
            "min": 18.0,
            "p50": 20.0,
            "p90": 24.0,
            "p95": 25.0,
            "p99": 30.0,
            "p999": 31.0,
            "max": 33.0,
        },
        "ttfot_ms": None,
    }
    base.update(overrides)
    return summaries.stage(**base)


def test_parses_the_documented_example() -> None:
    rules = parse_slo("ttft_p99_ms<=200,tpot_p50_ms<=50,output_tok_per_s>=1000")
    assert rules == (
        SloRule("ttft_p99_ms", "<=", 200.0, "ttft", "p99"),
        SloRule("tpot_p50_ms", "<=", 50.0, "tpot", "p50"),
        SloRule("output_tok_per_s", ">=", 1000.0),
    )
    assert [r.text for r in rules] == ["ttft_p99_ms<=200", "tpot_p50_ms<=50", "output_tok_per_s>=1000"]


@pytest.mark.parametrize(
    ("text", "key", "op", "metric", "stat"),
    [
        (" e2e_scheduled_p999_ms < 5000 ", "e2e_scheduled_p999_ms", "<", "e2e_scheduled", "p999"),
        ("chunk_gap_max_ms>0.5", "chunk_gap_max_ms", ">", "chunk_gap", "max"),
        ("itl_mean_ms<=30", "itl_mean_ms", "<=", "itl", "mean"),
        ("ttft_p75_ms<100", "ttft_p75_ms", "<", "ttft", "p75"),
        ("error_rate<0.01", "error_rate", "<", None, None),
        ("goodput_req_per_s>=3", "goodput_req_per_s", ">=", None, None),
    ],
)
def test_parses_every_form(text: str, key: str, op: str, metric: str | None, stat: str | None) -> None:
    (rule,) = parse_slo(text)
    assert (rule.key, rule.op, rule.metric, rule.stat) == (key, op, metric, stat)


def test_empty_means_no_objectives() -> None:
    assert parse_slo(None) == ()
    assert parse_slo("  ") == ()


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("ttft_p99_ms=200", "ttft_p99_ms=200"),
        ("ttft_p99_ms<=abc", "ttft_p99_ms<=abc"),
        ("ttft_p99_ms<=200,bogus_p99_ms<1", "bogus_p99_ms<1"),
        ("output_tok_per_sec>=5", "output_tok_per_sec>=5"),
        ("ttft_p99_ms<=inf", "ttft_p99_ms<=inf"),
        ("ttft_p99_ms=<200", "ttft_p99_ms=<200"),
    ],
)
def test_bad_clauses_name_the_flag_and_the_clause(text: str, bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_slo(text)
    assert err.value.option == "--slo"
    assert err.value.value == bad
    assert str(err.value).startswith(f"--slo={bad!r}")


def test_evaluate_reports_observed_values_and_verdicts() -> None:
    rules = parse_slo("ttft_p99_ms<=200,tpot_p50_ms<19,output_tok_per_s>=1000,error_rate<=0.001")
    results = evaluate(rules, stage())
    assert [(r.observed, r.passed) for r in results] == [
        (190.0, True),
        (20.0, False),
        (1200.0, True),
        (0.002, False),
    ]
    assert results[1].describe() == "tpot_p50_ms<19: 20 (MISS)"


def test_strict_and_inclusive_operators_at_the_boundary() -> None:
    assert evaluate(parse_slo("ttft_p99_ms<=190"), stage())[0].passed
    assert not evaluate(parse_slo("ttft_p99_ms<190"), stage())[0].passed
    assert evaluate(parse_slo("output_tok_per_s>=1200"), stage())[0].passed
    assert not evaluate(parse_slo("output_tok_per_s>1200"), stage())[0].passed


def test_an_unmeasured_metric_is_a_miss_not_a_pass() -> None:
    (result,) = evaluate(parse_slo("ttfot_p50_ms<=100"), stage())
    assert result.observed is None and not result.passed
    assert "not measured" in result.describe()
    (empty,) = evaluate(parse_slo("error_rate<=0.1"), stage(error_rate=None))
    assert not empty.passed


def test_percentiles_the_summary_lacks_come_from_the_histograms() -> None:
    hist = LogHistogram()
    for ms in range(1, 101):
        hist.add(ms * 1_000_000)
    (rule,) = parse_slo("ttft_p75_ms<=80")
    (no_hist,) = evaluate([rule], stage())
    assert no_hist.observed is None
    (result,) = evaluate([rule], stage(), {"ttft": hist})
    assert result.observed == pytest.approx(75.0, rel=0.01)
    assert result.passed


def _ms(ttft: float | None, tpot: float | None, e2e: float | None, **more: float) -> dict[str, float | None]:
    return {"ttft": ttft, "tpot": tpot, "e2e": e2e, **more}


def test_request_meets_applies_percentile_rules_per_request() -> None:
    rules = parse_slo("ttft_p99_ms<=200,tpot_p50_ms<=50,output_tok_per_s>=1000,e2e_p90_ms<5000")
    assert request_meets(rules, _ms(150, 40, 4000))
    assert not request_meets(rules, _ms(201, 40, 4000))
    assert not request_meets(rules, _ms(150, 50.5, 4000))
    assert not request_meets(rules, _ms(150, 40, 5000))


def test_request_meets_ignores_undefined_and_stage_only_metrics() -> None:
    # a one-token answer has no TPOT; throughput and connect time are not a request's to meet
    rules = parse_slo("tpot_p50_ms<=50,output_tok_per_s>=1e9,connect_p99_ms<=0.001")
    assert request_meets(rules, _ms(10, None, 20))


def test_request_meets_checks_itl_against_the_worst_gap_when_given() -> None:
    rules = parse_slo("itl_p99_ms<=100")
    assert request_meets(rules, _ms(10, 20, 30))
    assert request_meets(rules, _ms(10, 20, 30, itl=99))
    assert not request_meets(rules, _ms(10, 20, 30, itl=101))
    assert not request_meets(parse_slo("ttfot_p50_ms<5"), _ms(1, 1, 1, ttfot=6))


def test_a_requests_values_are_the_catalogs_goodput_metrics_in_ms() -> None:
    r = RequestRecord("r", "u", 0, Phase.MEASURE, "chat", True, scheduled_ns=MS, sent_ns=MS)
    r.event_ns, r.event_tokens = array("q", [3 * MS, 12 * MS]), array("l", [1, 1])
    r.first_token_ns, r.last_token_ns, r.done_ns, r.output_tokens = 3 * MS, 12 * MS, 12 * MS, 2
    r.connect_start_ns, r.connected_ns = 0, MS  # per request, but a stage objective
    values = request_ms(r, derive.measure(r))
    assert set(values) == {"ttft", "ttfot", "tpot", "e2e"}
    assert values == {"ttft": 2.0, "ttfot": None, "tpot": 9.0, "e2e": 11.0}
    assert request_meets(parse_slo("ttft_p99_ms<=2,connect_p50_ms<=0.1"), values)
    assert not request_meets(parse_slo("e2e_p50_ms<11"), values)


@pytest.mark.parametrize(
    ("value", "rate"), [(None, None), ("0.01", 0.01), ("5%", 0.05), (0.0, 0.0), ("1", 1.0)]
)
def test_max_error_rate(value: str | float | None, rate: float | None) -> None:
    assert parse_max_error_rate(value) == rate


@pytest.mark.parametrize("value", ["-0.1", "1.5", "lots", "200%"])
def test_bad_max_error_rate_names_the_flag(value: str) -> None:
    with pytest.raises(ConfigError, match=r"^--max-error-rate="):
        parse_max_error_rate(value)
