"""The timing judge's arithmetic, on canary logs written here: statistic matched to the claim,
the client's lag capped at the health limit, three outcomes, and the ledger's totals."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.timing import ledger
from tests.support.timing.canary import CPU_RECORD, RECORD, busy_ticks, process_ticks, tree_ticks, waited_us
from tests.support.timing.judge import Judge, Judgement, Outcome
from tests.support.timing.noise import CanaryLog, Stat

MS = 1_000_000


def _canary(tmp_path: Path, late_ms: list[float], kind: str = "plain") -> CanaryLog:
    """A canary log with one wake-up per ms, late by ``late_ms`` in turn."""
    with (tmp_path / f"{kind}.bin").open("ab") as f:
        for i, late in enumerate(late_ms):
            f.write(RECORD.pack((i + 1) * MS, int(late * MS)))
    return CanaryLog(tmp_path)


def _judge(log: CanaryLog, seen: list[Judgement] | None = None) -> Judge:
    judge = Judge("t", log, 0, (seen if seen is not None else []).append)
    judge.during(0, 10_000 * MS)
    return judge


def _summary(p50: float, p99: float, lag_max: float) -> dict[str, object]:
    health = {"loop_lag_p50_ms": p50, "loop_lag_p99_ms": p99, "loop_lag_max_ms": lag_max}
    return {"stages": [{"client_health": {"local": health}, "window_ns": [0, 1000 * MS]}]}


def test_the_noise_statistic_is_the_claims(tmp_path: Path) -> None:
    # 98 quiet wake-ups, one 3 ms late, one 9 ms late: the median is quiet, the max is not.
    judge = _judge(_canary(tmp_path, [0.1] * 98 + [3.0, 9.0]))
    assert judge.at_most(1.05, 1.0, Stat.MEDIAN, "median").canary == pytest.approx(0.1)
    assert judge.at_most(1.2, 1.0, Stat.P99, "p99").canary == pytest.approx(3.0)
    assert judge.at_most(1.2, 1.0, Stat.EVERY, "every").canary == pytest.approx(9.0)


def test_three_outcomes(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [0.2] * 99 + [5.0]))
    assert judge.at_most(0.9, 1.0, Stat.EVERY, "within its base").outcome is Outcome.PASS
    assert judge.at_most(1.1, 1.0, Stat.MEDIAN, "within base and noise").outcome is Outcome.PASS
    # beyond the base while the machine alone was later than the base: cannot tell
    assert judge.at_most(7.0, 1.0, Stat.EVERY, "noisy").outcome is Outcome.UNJUDGED
    with pytest.raises(AssertionError, match=r"median: 1\.500 ms, bound 1\.200"):
        judge.at_most(1.5, 1.0, Stat.MEDIAN, "median")
    assert [j.outcome for j in judge.judgements] == ["pass", "pass", "unjudged", "fail"]
    assert [j.what for j in judge.unjudged] == ["noisy"]


def test_the_clients_own_lag_counts_only_up_to_the_health_limit(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [0.1] * 100))
    judge.client(_summary(p50=0.3, p99=40.0, lag_max=80.0))
    judgement = judge.at_most(5.0, 1.0, Stat.P99, "lag")
    # the limit at which llmload flags the stage client-bound is a p99 loop lag of 5 ms
    assert (judgement.client, judgement.client_uncapped) == (5.0, 40.0)
    # a client whose lag grew cannot make the machine look too noisy to judge: it fails
    with pytest.raises(AssertionError):
        judge.at_most(30.0, 1.0, Stat.P99, "regressed")


def test_the_server_reports_its_own_lateness(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [0.0] * 100))
    judge.server({"since_ns": 0, "lateness": {"p50_ns": 100_000, "p99_ns": 2 * MS, "max_ns": 4 * MS}})
    assert judge.close(21.9, 20.0, 1.0, Stat.P99, "itl").bound == pytest.approx(3.0)
    # the machine's noise includes the server's: over the base, the claim is unjudged, not failed
    assert judge.close(26.0, 20.0, 1.0, Stat.EVERY, "itl max").outcome is Outcome.UNJUDGED


def test_a_rate_is_allowed_what_late_reads_at_the_edges_move(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [0.0] * 98 + [15.0, 15.0]))
    judge.during(0, 1000 * MS)  # a 1 s window: two edges each late by 15 ms (p99) move 3 %
    judgement = judge.rate(103.5, 100.0, 0.02, "tok/s")
    assert judgement.bound == pytest.approx(0.05) and judgement.outcome is Outcome.UNJUDGED
    (tmp_path / "quiet").mkdir()
    judge = _judge(_canary(tmp_path / "quiet", [0.5] * 100))
    judge.during(0, 1000 * MS)  # here the edges move 0.1 %: 3.5 % off is a failure
    with pytest.raises(AssertionError):
        judge.rate(103.5, 100.0, 0.02, "tok/s")


def test_a_rare_stall_across_a_rates_edge_is_noise_the_p99_does_not_see(tmp_path: Path) -> None:
    # 2 s of quiet wake-ups but one, 100 ms late, 11 ms after the window opens: a one-in-a-
    # thousand stall (the window's p99 is quiet) that covered its first edge
    late = [0.1] * 2000
    late[1010] = 100.0
    judge = _judge(_canary(tmp_path, late))
    judge.during(1000 * MS, 2000 * MS)
    judgement = judge.rate(105.0, 100.0, 0.02, "tok/s")
    assert judgement.canary == pytest.approx(0.1001) and judgement.outcome is Outcome.UNJUDGED
    # the same stall in the middle of the window moves nothing across an edge: 5% off fails
    late[1010], late[1600] = 0.1, 100.0
    (tmp_path / "middle").mkdir()
    judge = _judge(_canary(tmp_path / "middle", late))
    judge.during(1000 * MS, 2000 * MS)
    with pytest.raises(AssertionError):
        judge.rate(105.0, 100.0, 0.02, "tok/s")


def test_few_late_is_a_binomial_allowance_on_the_canarys_own_share(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [0.1] * 990 + [4.0] * 10))  # 1 % of wake-ups 4 ms late
    ok = judge.few_late(late=5, total=200, over_ms=2.0, what="late first reads")
    assert ok.outcome is Outcome.PASS and 5 < ok.bound < 20  # 2 expected, more by chance
    with pytest.raises(AssertionError):
        judge.few_late(late=30, total=200, over_ms=2.0, what="late first reads")
    with pytest.raises(AssertionError):  # nothing on the canary was that late: none may be
        judge.few_late(late=1, total=200, over_ms=5.0, what="very late first reads")


def test_an_exact_count_admits_no_noise(tmp_path: Path) -> None:
    judge = _judge(_canary(tmp_path, [50.0] * 100))
    assert judge.exactly(10, 8, 12, "tokens in the window").outcome is Outcome.PASS
    with pytest.raises(AssertionError):
        judge.exactly(13, 8, 12, "tokens in the window")


def test_the_ledger_keeps_the_last_attempt_and_fails_a_run_that_could_not_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def line(test: str, outcome: Outcome) -> Judgement:
        return Judgement(test, "w", "p50", "ms", 1, 1, 0, 0, 0, 0, 1, outcome)

    monkeypatch.setenv(ledger.TIER_ENV, "alone")
    for test, outcome in [("a", Outcome.PASS), ("b", Outcome.UNJUDGED), ("c", Outcome.UNJUDGED)]:
        ledger.append(tmp_path, line(test, outcome))
    assert ledger.totals(ledger.read(tmp_path), "alone").unjudged == ["b", "c"]
    monkeypatch.setenv(ledger.ATTEMPT_ENV, "2")
    ledger.append(tmp_path, line("b", Outcome.PASS))  # judged when run once more
    result = ledger.totals(ledger.read(tmp_path))
    assert (result.passed, result.unjudged, result.failed, result.rerun) == (["a", "b"], ["c"], [], 1)
    assert result.line() == "timing: 3 tests, 3 judgements: 2 passed, 1 unjudged, 0 failed (1 run again)"
    assert result.over_limit  # one in three is over the limit
    assert ledger.main(["summary", str(tmp_path)]) == 1


def test_a_stall_that_ends_after_the_window_still_counts_in_it(tmp_path: Path) -> None:
    with (tmp_path / "plain.bin").open("ab") as f:
        for i in range(10):
            f.write(RECORD.pack((i + 1) * MS, 0))
        f.write(RECORD.pack(50 * MS, 39 * MS))  # asleep from 10 ms, woken 39 ms late at 50 ms
    log = CanaryLog(tmp_path)
    assert log.wakes("plain", 0, 20 * MS).at(Stat.EVERY) == pytest.approx(39.0)
    assert log.wakes("plain", 0, 5 * MS).at(Stat.EVERY) == 0.0  # it began after this window


def _pressure(tmp_path: Path, share: float) -> None:
    """Pressure samples every 100 ms over 10 s, some task waiting ``share`` of the time."""
    with (tmp_path / "pressure.bin").open("ab") as f:
        for i in range(101):
            f.write(RECORD.pack(i * 100 * MS, int(i * 100_000 * share)))


@pytest.mark.parametrize(("share", "beside_others", "outcome"), [
    (0.35, True, Outcome.UNJUDGED),  # beside other tests, the CPUs oversubscribed: not the client's
    (0.02, True, Outcome.FAIL),  # beside others on idle cores: the client's
    (0.35, False, Outcome.FAIL),  # alone, the test's own load is no excuse
])  # fmt: skip
def test_a_failure_beside_other_tests_under_cpu_pressure_is_unjudged(
    tmp_path: Path, share: float, beside_others: bool, outcome: Outcome
) -> None:
    log = _canary(tmp_path, [0.1] * 100)
    _pressure(tmp_path, share)
    assert log.cpu_pressure(0, 10_000 * MS) == pytest.approx(share, rel=0.01)
    seen = _a_median_three_times_its_base(log, beside_others, outcome)
    if outcome is Outcome.UNJUDGED:
        assert "oversubscribed 35% of the window" in seen[0].explain()


def _a_median_three_times_its_base(log: CanaryLog, beside_others: bool, outcome: Outcome) -> list[Judgement]:
    """A median claim missed by far, judged over the 10 s window: raises only if it fails."""
    seen: list[Judgement] = []
    judge = Judge("t", log, 0, seen.append, beside_others=beside_others)
    judge.during(0, 10_000 * MS)
    if outcome is Outcome.FAIL:
        with pytest.raises(AssertionError):
            judge.at_most(3.0, 1.0, Stat.MEDIAN, "median")
    else:
        judge.at_most(3.0, 1.0, Stat.MEDIAN, "median")
    assert seen[0].outcome is outcome
    return seen


@pytest.mark.parametrize(("share", "outcome"), [(0.35, Outcome.UNJUDGED), (0.02, Outcome.FAIL)])
def test_a_client_that_calls_the_machine_busy_is_believed_only_on_the_kernels_word(
    tmp_path: Path, share: float, outcome: Outcome
) -> None:
    log = _canary(tmp_path, [0.1] * 100)
    _pressure(tmp_path, share)
    seen: list[Judgement] = []
    judge = Judge("t", log, 0, seen.append)  # alone: the refusal is no failure beside others
    judge.during(0, 10_000 * MS)
    if outcome is Outcome.FAIL:  # its reads fell behind on idle CPUs: the client's own slowness
        with pytest.raises(AssertionError):
            judge.busy_as_the_client_says("refused")
    else:
        judge.busy_as_the_client_says("refused")
    assert seen[0].outcome is outcome
    assert seen[0].observed == pytest.approx(share, rel=0.01)


def _cpu(tmp_path: Path, busy: float, ours: float) -> None:
    """CPU samples every 100 ms over 10 s: the machine's CPUs ``busy`` of the time, the tests'
    own processes ``ours`` of it (shares of all the machine's CPUs)."""
    cpus = os.cpu_count() or 1
    with (tmp_path / "cpu.bin").open("ab") as f:
        for i in range(101):
            us = i * 100_000 * cpus
            f.write(CPU_RECORD.pack(i * 100 * MS, int(us * busy), int(us * ours)))


@pytest.mark.parametrize(("busy", "ours", "beside_others", "outcome"), [
    (0.9, 0.4, False, Outcome.UNJUDGED),  # half the machine taken outside the tests, alone too
    (0.9, 0.4, True, Outcome.UNJUDGED),
    (0.9, 0.85, False, Outcome.FAIL),  # the tests' own processes (the client among them) took it
    (0.3, 0.2, False, Outcome.FAIL),  # a tenth outside: not enough to excuse
])  # fmt: skip
def test_a_failure_while_something_outside_the_tests_took_the_cpus_is_unjudged(
    tmp_path: Path, busy: float, ours: float, beside_others: bool, outcome: Outcome
) -> None:
    log = _canary(tmp_path, [0.1] * 100)
    _cpu(tmp_path, busy, ours)
    assert log.outside_cpu(0, 10_000 * MS) == pytest.approx(busy - ours, rel=0.01)
    seen = _a_median_three_times_its_base(log, beside_others, outcome)
    if outcome is Outcome.UNJUDGED:
        assert "50% of the CPUs taken outside the tests" in seen[0].explain()


def test_a_client_that_calls_the_machine_busy_is_believed_when_something_outside_took_the_cpus(
    tmp_path: Path,
) -> None:
    log = _canary(tmp_path, [0.1] * 100)
    _pressure(tmp_path, 0.02)  # no queue on the CPUs: alone, this refusal would fail
    _cpu(tmp_path, 0.9, 0.4)
    seen: list[Judgement] = []
    judge = Judge("t", log, 0, seen.append)
    judge.during(0, 10_000 * MS)
    judge.busy_as_the_client_says("refused")
    assert seen[0].outcome is Outcome.UNJUDGED
    assert "50% of the CPUs taken outside the tests" in seen[0].explain()


def test_the_kernels_cpu_counts_are_read() -> None:
    assert busy_ticks("cpu  100 5 20 900 7 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n") == 131
    # a process's name may hold spaces and parentheses: the fields are counted after the last one
    stat = "42 (a (b) c) S 7 42 42 0 -1 4194560 1 2 3 4 10 20 30 40 20 0 1 0 5 6 7"
    assert process_ticks(stat) == (7, 100)


def test_the_tests_own_cpu_includes_a_child_that_ended() -> None:
    before = tree_ticks(os.getpid())
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)  # reaped: its CPU moves to ours
    assert tree_ticks(os.getpid()) - before >= 0.3 * os.sysconf("SC_CLK_TCK")


def test_the_kernels_pressure_line_is_read() -> None:
    text = "some avg10=14.69 avg60=10.98 avg300=26.16 total=2397247946\nfull avg10=0.00 total=0\n"
    assert waited_us(text) == 2397247946 and waited_us("") is None
