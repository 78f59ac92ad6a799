"""Recording rules and alerts: promtool-valid, and unit-tested by `promtool test rules`."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.prometheus import PROMTOOL, REPO

PROM = REPO / "exporters" / "prometheus"
pytestmark = pytest.mark.skipif(
    PROMTOOL is None,
    reason="promtool missing: scripts/install-test-deps.sh installs Debian's prometheus package",
)


def promtool(*args: str) -> str:
    done = subprocess.run(
        [str(PROMTOOL), *args], capture_output=True, text=True, cwd=PROM, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_rules_are_valid() -> None:
    assert "SUCCESS: 9 rules found" in promtool("check", "rules", "rules.yml")


def test_scrape_config_is_valid() -> None:
    assert "is valid prometheus config file syntax" in promtool("check", "config", "prometheus.yml")


def test_promtool_unit_tests_pass() -> None:
    assert "SUCCESS" in promtool("test", "rules", "rules_test.yml")


def test_every_alert_compares_a_recorded_series_with_a_threshold() -> None:
    # The e2e test evaluates each alert as `<series> > bool <threshold>`, which needs this shape.
    text = (PROM / "rules.yml").read_text()
    alerts = [
        line.split("expr:", 1)[1].strip()
        for line in text.splitlines()
        if line.strip().startswith("expr: llmload:")
    ]
    assert len(alerts) == 3
    for expr in alerts:
        series, threshold = expr.split(" > ")
        assert series.startswith("llmload:") and float(threshold) >= 0
