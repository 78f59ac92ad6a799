"""Under CI=true every tier runs: a skip fails the run, unless it is a timing bound this machine
cannot judge (``tests.support.timing.plugin.UNJUDGED``, said with the numbers that show why).

Elsewhere a missing tool (llama-server not built, no Chromium, no Prometheus, not root for the
network namespaces) skips and says how to get it. In CI it would hide exactly the tests that
matter most, the ones against real servers and a real browser, so a green CI must mean they ran.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

from tests.support.timing.judge import UNJUDGED
from tests.support.timing.plugin import (
    CALL_PASSED,
    canary_log,
    check_collected,
    judge,
    note_setup,
    unjudged_reason,
)

__all__ = ["canary_log", "judge"]  # the timing judge's fixtures, for every tier

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# ``--processes auto`` (sweep, search, tune, demo) plans by one process's measured capacity. A
# calibration taken inside the side-by-side tier would measure the other tests' load and be
# cached for the machine: every test but the calibration's own plans by this figure instead,
# about what `llmload calibrate` measures on a 2-core VM (docs/performance.md).
os.environ.setdefault("LLMLOAD_CAPACITY", "40000")


@pytest.fixture(scope="session", autouse=True)
def _history_store(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every run records itself in the results store (docs/history.md): the suite's runs, and
    the processes they start, into a store of this session's own, never the user's."""
    os.environ["LLMLOAD_HISTORY"] = str(tmp_path_factory.mktemp("history") / "history.sqlite")
    os.environ.pop("LLMLOAD_NO_HISTORY", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call":
        reason = unjudged_reason(item) if report.passed else None
        if reason is not None:  # its assertions held, but a bound could not be judged
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")
        item.stash[CALL_PASSED] = report.passed
    if not (IN_CI and report.skipped) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if reason.removeprefix("Skipped: ").startswith(UNJUDGED):
        return
    report.outcome = "failed"
    report.longrepr = f"CI=true, so a skip fails the run: {reason}"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    note_setup(item)


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups off the items
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test marked timing takes the judge. The tests of a module that share a module-scoped
    fixture (a Prometheus, a llama-server, a run they all read) go to one xdist worker (``--dist
    loadgroup``), so the fixture is set up once, not once per worker: spread over four,
    test_prometheus.py's run cost 3 x 44 s. The tests marked long go first: collected in file
    order, the last of them (tune's, the bench smoke) started late and ran on by themselves for
    a minute or two at the end of the waiting tier. (Not those on llama-server: on a fresh machine
    they would hold a worker waiting for its build.)"""
    check_collected(items)
    items.sort(key=lambda item: item.get_closest_marker("long") is None)
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        defs = item._fixtureinfo.name2fixturedefs.values()
        if any(d[-1].scope == "module" for d in defs if d):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


@pytest.hookimpl(trylast=True)  # after xdist has written the groups into the node ids
def pytest_collection_finish(session: pytest.Session) -> None:
    if not getattr(session.config.option, "loadgroup", False):
        return
    grouped = [i for i in session.items if i.get_closest_marker("xdist_group")]
    if grouped and "@" not in grouped[0].nodeid:
        raise pytest.UsageError(
            "pytest-xdist's --dist loadgroup does not group with this pytest "
            f"({pytest.__version__}; pytest-xdist #1386): install the test group's pins "
            "(make .test), or every module fixture is set up once per worker"
        )
