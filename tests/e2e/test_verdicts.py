"""Every way out of a run ends with its own exit code, one clear line, an honest summary and a
report that says so, never a traceback: real `locust` and `llmload` processes against the
simulator's fault modes and raw test servers that answer HTML, 401, 400 or nothing at all."""

from __future__ import annotations

import html
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest

from llmload.core.health import HealthLimits, HealthSnapshot, is_client_bound
from llmload.results.exitcodes import ExitCode
from llmload.sim.process import start_sim
from tests.e2e.conftest import REPO, LocustRun, RunLocust
from tests.support.chromium import CHROMIUM, chromium
from tests.support.fleet import own_master_port
from tests.support.rawserver import RawServer, Send, Sleep
from tests.support.schema import read_checked
from tests.support.timing.judge import Judge
from tests.support.timing.noise import Stat

pytestmark = pytest.mark.e2e
LLMLOAD = [sys.executable, "-m", "llmload.cli"]


def answer(status: int, body: bytes, content_type: str = "application/json") -> Send:
    head = (
        f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return Send(head + body)


def dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def last_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("llmload: ")]
    return lines[-1] if lines else ""


def assert_verdict(run: LocustRun, code: ExitCode, line_starts: str) -> dict[str, Any]:
    """The exit code, the one line on the console, the same in summary.json and on the report's
    banner as Chromium renders it, and no traceback."""
    assert "Traceback" not in run.output, run.output[-3000:]
    assert run.returncode == code, run.output[-3000:]
    summary = run.summary
    assert summary["exit"]["code"] == code
    assert summary["exit"]["line"].startswith(line_starts), summary["exit"]["line"]
    assert "llmload: " + summary["exit"]["line"] + "\n" in run.output
    dom = rendered(run.results / "report.html", run.results.parent / f"chromium-{run.results.name}")
    if code is ExitCode.OK:
        assert 'class="ok" id="verdict"' in dom and "Run failed" not in dom
    else:
        assert 'class="fail" id="verdict"' in dom and f"Run failed: exit {int(code)}" in dom
        assert (
            html.escape(summary["exit"]["line"], quote=True).replace("://", "&#58;//") in dom
            or html.escape(summary["exit"]["line"], quote=False) in dom
        )
        if summary["exit"]["errors"]:
            assert "<h2>Errors</h2>" in dom
    return summary


def rendered(report: Path, tmp_path: Path) -> str:
    """The report's DOM as headless Chromium renders it (networking off); the file itself where
    Chromium is missing (scripts/install-test-deps.sh installs it as root)."""
    if not CHROMIUM.exists():
        return report.read_text(encoding="utf-8")
    proc = chromium(tmp_path / "profile", "--dump-dom", report.as_uri())
    assert "<body>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def test_every_request_failing_stops_the_run_and_the_report_is_red(
    run_locust: RunLocust, tmp_path: Path
) -> None:
    with start_sim(["--fault", "http_500", "--fault-rate", "1"]) as sim:
        run = run_locust(sim.url, users=4, run_time="20s", expect_code=None)
    summary = assert_verdict(
        run,
        ExitCode.COULD_NOT_START,
        'every request failed: HTTP 500 "simulated server error" — the server '
        "failed: see its log (stopped after the first 20 requests)",
    )
    assert summary["complete"] is False and summary["run"]["stopped"]["by"] == "fail_fast"
    # Stopped at once, and with no tight loop: a handful of requests, not tens of thousands.
    assert len(run.records) < 100
    dom = rendered(run.results / "report.html", tmp_path)
    assert 'class="fail" id="verdict"' in dom and "Run failed: exit 2" in dom
    assert "simulated server error" in dom and "<h2>Errors</h2>" in dom
    assert "looked sound" not in dom


def test_errors_over_the_default_limit_fail_with_exit_1(run_locust: RunLocust, tmp_path: Path) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2", "--fault", "http_500", "--fault-rate", "0.3"]) as sim:
        run = run_locust(sim.url, "--max-tokens", "16", users=4, run_time="6s", expect_code=None)
    summary = assert_verdict(run, ExitCode.ERRORS_OVER_LIMIT, "errors over limit: stage 0 (C=4): error rate")
    assert summary["exit"]["errors"][0]["kind"] == "http_5xx"
    assert summary["stages"][0]["error_samples"]["http_5xx"]["status"] == 500
    dom = rendered(run.results / "report.html", tmp_path)
    assert "Run failed: exit 1" in dom and "http_5xx" in dom


def test_accepting_errors_on_purpose(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2", "--fault", "http_500", "--fault-rate", "0.5"]) as sim:
        run = run_locust(
            sim.url, "--max-tokens", "16", "--max-error-rate", "1", users=2, run_time="4s", expect_code=None
        )
    assert_verdict(run, ExitCode.OK, "ok: every check passed")
    assert run.summary["stages"][0]["error_rate"] > 0.2  # measured, and accepted as asked


def test_accepting_errors_does_not_make_a_run_without_one_answer_ok(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2", "--fault", "http_500", "--fault-rate", "1"]) as sim:
        run = run_locust(
            sim.url, "--max-tokens", "16", "--max-error-rate", "1", users=2, run_time="4s", expect_code=None
        )
    summary = assert_verdict(
        run, ExitCode.COULD_NOT_START, 'every request failed: HTTP 500 "simulated server error"'
    )
    assert summary["run"]["stopped"] is None  # no fail-fast stop: the run went to its end
    assert summary["stages"][0]["error_rate"] == 1.0


def test_nothing_listening_is_one_line(run_locust: RunLocust) -> None:
    run = run_locust(
        f"http://127.0.0.1:{dead_port()}", "--model", "m", users=4, run_time="20s", expect_code=None
    )
    summary = assert_verdict(run, ExitCode.COULD_NOT_START, "every request failed: connect_error")
    assert "nothing accepted a connection" in summary["exit"]["line"]
    stage = summary["stages"][0]
    health = [msgspec.convert(h, HealthSnapshot) for h in stage["client_health"].values()]
    # A dead target must not make the client spin (its backoff keeps the CPU low: CPU time, which
    # a busy neighbour does not add to). Whether its loop lagged is this machine's doing, and
    # the flag says exactly that: the verdict of the recorded health, whatever it was.
    assert all(h.cpu_percent <= 100 * HealthLimits().cpu_fraction for h in health), health
    assert stage["client_bound"] is any(is_client_bound(h, HealthLimits()) for h in health), health


def test_unauthorised_names_the_missing_key_and_wait_gives_up_at_once(
    run_locust: RunLocust, judge: Judge
) -> None:
    body = b'{"error": {"message": "Invalid API key", "type": "auth"}}'
    with RawServer([answer(401, body)]) as server:
        env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        run = run_locust(server.url, "--model", "m", users=2, run_time="20s", env=env, expect_code=None)
        started = time.perf_counter_ns()
        wait = subprocess.run(
            [*LLMLOAD, "wait", "--host", server.url],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            check=False,
        )
        waited_ms = (time.perf_counter_ns() - started) / 1e6
    assert_verdict(
        run,
        ExitCode.COULD_NOT_START,
        'every request failed: HTTP 401 "Invalid API key" — the server wants an API key: '
        "export OPENAI_API_KEY=...",
    )
    assert wait.returncode == ExitCode.COULD_NOT_START
    # At once: an interpreter's start and one answer, not its --timeout of 900 s; 30 s tells
    # the two apart with the seconds a start takes on a shared machine to spare.
    judge.during(started)
    judge.at_most(waited_ms, 30_000, Stat.EVERY, "llmload wait against a 401")
    assert "the server wants an API key" in wait.stdout


def test_html_200_is_no_answer(run_locust: RunLocust) -> None:
    page = b"<!DOCTYPE html><html><body>It works!</body></html>"
    with RawServer([answer(200, page, "text/html")]) as server:
        run = run_locust(server.url, "--model", "m", users=2, run_time="20s", expect_code=None)
    summary = assert_verdict(run, ExitCode.COULD_NOT_START, "every request failed: ")
    assert "is --host the API's base URL?" in summary["exit"]["line"]


def test_a_rejected_extra_body_points_at_it(run_locust: RunLocust) -> None:
    body = b'{"error": {"message": "unknown field \'foo\'", "type": "invalid_request_error"}}'
    with RawServer([answer(400, body)]) as server:
        run = run_locust(
            server.url,
            "--model",
            "m",
            "--extra-body",
            '{"foo": 1}',
            users=2,
            run_time="20s",
            expect_code=None,
        )
    assert_verdict(
        run,
        ExitCode.COULD_NOT_START,
        "every request failed: HTTP 400 \"unknown field 'foo'\" — check --extra-body",
    )


def test_a_server_that_never_answers_measured_nothing(run_locust: RunLocust) -> None:
    with RawServer([Sleep(30)]) as server:
        run = run_locust(
            server.url,
            "--model",
            "m",
            "--drain-s",
            "1",
            users=2,
            run_time="5s",
            expect_code=None,
            timeout_s=120,
        )
    assert_verdict(
        run,
        ExitCode.COULD_NOT_START,
        f"nothing measured: no request was sent: {server.url} gave no HTTP answer",
    )
    # No empty files that look like results.
    assert all(p.stat().st_size > 0 for p in run.results.iterdir()), sorted(run.results.iterdir())
    assert not list(run.results.glob("*.png")) and not (run.results / "requests.jsonl").exists()


def test_requests_that_never_finish_measured_nothing(run_locust: RunLocust) -> None:
    # 12 s: beside a CPU loop and three other tests, Locust's start and llmload's first look
    # once took all of an 8 s run, and the run rightly said no request was sent (CI29)
    with start_sim(["--ttft-ms", "60000", "--step-ms", "10"]) as sim:
        run = run_locust(sim.url, "--drain-s", "1", users=2, run_time="12s", expect_code=None)
        arrived = len(sim.requests())
    assert arrived == 2, f"the simulator saw {arrived} requests: the run ended before its users sent"
    assert_verdict(
        run,
        ExitCode.COULD_NOT_START,
        "nothing measured: 2 requests were sent and none finished before the run ended",
    )
    assert [r["outcome"] for r in run.records] == ["unfinished", "unfinished"]
    assert not list(run.results.glob("*.png"))


@pytest.mark.parametrize("users", ["-1", "0"])
def test_bad_user_counts_stop_before_the_start(run_locust: RunLocust, users: str) -> None:
    run = run_locust("http://127.0.0.1:9", "-u", users, users=1, expect_code=None)
    assert run.returncode == ExitCode.COULD_NOT_START
    assert "Traceback" not in run.output
    assert f"llmload: -u/--users={int(users)}: must be at least 1" in run.output


def test_an_unlisted_model_is_a_warning(run_locust: RunLocust) -> None:
    with start_sim(["--ttft-ms", "5", "--step-ms", "2"]) as sim:
        run = run_locust(
            sim.url, "--model", "no-such-model", "--max-tokens", "8", users=2, run_time="3s", expect_code=None
        )
    assert "--model 'no-such-model' is not among the models" in run.output
    assert any("no-such-model" in w for w in run.summary["warnings"])


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_is_marked(tmp_path: Path, sig: signal.Signals, judge: Judge) -> None:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5"]) as sim:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(REPO / "locustfiles/chat.py"),
                "--headless",
                "-u",
                "4",
                "-r",
                "4",
                "-t",
                "60s",
                "--host",
                sim.url,
                "--max-tokens",
                "64",
                "--results-dir",
                str(tmp_path),
                "--run-id",
                "cut",
                "--only-summary",
                "--loglevel",
                "WARNING",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        time.sleep(8)
        started = time.perf_counter_ns()
        proc.send_signal(sig)
        output, _ = proc.communicate(timeout=60)
        took_ms = (time.perf_counter_ns() - started) / 1e6
    run_dir = tmp_path / "cut"
    summary = read_checked(run_dir / "summary.json")
    assert proc.returncode == ExitCode.INTERRUPTED, output[-3000:]
    assert "Traceback" not in output
    # In-flight requests (0.35 s long) are not given the drain's two minutes: the results are
    # written within seconds, 20 s telling the two apart.
    judge.during(started)
    judge.at_most(took_ms, 20_000, Stat.EVERY, "the run's end after the signal")
    assert summary["complete"] is False and summary["run"]["stopped"]["by"] == "interrupt"
    assert summary["stages"][0]["partial"] is True and summary["stages"][0]["requests"]["ok"] > 0
    assert last_line(output) == "llmload: " + summary["exit"]["line"]
    assert (run_dir / "report.html").is_file() and (run_dir / "requests.jsonl").stat().st_size > 0


def test_ctrl_c_on_a_sweep_keeps_what_it_measured(tmp_path: Path) -> None:
    # A terminal's Ctrl+C signals the whole foreground process group: llmload, and whatever it
    # did not put in a group of its own.
    proc = subprocess.Popen(
        [
            *LLMLOAD,
            "sweep",
            "--sim",
            "vllm",
            "--levels",
            "1,2,4",
            "--stage-s",
            "4",
            "--max-tokens",
            "32",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "sw",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    time.sleep(14)
    os.killpg(proc.pid, signal.SIGINT)
    output, _ = proc.communicate(timeout=90)
    assert proc.returncode == ExitCode.INTERRUPTED, output[-3000:]
    assert "Traceback" not in output  # (gevent still names the KeyboardInterrupt it delivered)
    summary = read_checked(tmp_path / "sw" / "summary.json")
    assert summary["complete"] is False and summary["exit"]["name"] == "interrupted"
    assert any(stage["partial"] for stage in summary["stages"])
    # The simulator outlived the client: no request of the cut stage failed for its death.
    assert all(not (stage.get("attempts") or {}).get("errors") for stage in summary["stages"])
    assert (tmp_path / "sw" / "report.html").is_file()


def test_a_sweep_against_nothing_is_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            *LLMLOAD,
            "sweep",
            "--host",
            f"http://127.0.0.1:{dead_port()}",
            "--no-wait",
            "--levels",
            "1",
            "--stage-s",
            "2",
            "--results-dir",
            str(tmp_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == ExitCode.COULD_NOT_START, output[-3000:]
    assert "Traceback" not in output
    assert "cannot list models at" in output and "is the server up?" in output


@pytest.mark.timing  # TTFT of one run against another's: a busy machine moves one, not the other
def test_two_identical_runs_do_not_turn_into_cache_hits(run_locust: RunLocust, judge: Judge) -> None:
    # Long prompts, so that prefill dominates TTFT: a cache hit would show as a large drop.
    args = ("--prompt-tokens", "3000", "--max-tokens", "8", "--ignore-eos", "--seed", "7")
    with start_sim(["--profile", "vllm"]) as sim:
        first, second = (run_locust(sim.url, *args, users=1, run_time="4s") for _ in range(2))
        judge.server(sim.stats(since_ns=first.summary["stages"][0]["window_ns"][0]))
        cached, hits = (
            run_locust(sim.url, *args, "--prefix-cache", users=1, run_time="4s") for _ in range(2)
        )
        # The trap itself: a run repeated exactly, its salt given back.
        salt = first.summary["run"]["reproducibility"]["salt"]
        repeat = run_locust(sim.url, *args, "--salt", salt, users=1, run_time="4s")
    ttft = [run.summary["stages"][0]["ttft_ms"]["p50"] for run in (first, second, cached, hits, repeat)]
    print(f"TTFT p50: first {ttft[0]}, second {ttft[1]}, cached {ttft[2]}, hits {ttft[3]}, repeat {ttft[4]}")
    # The two unique runs' TTFTs are the same prefill of 3,000 tokens, each read from a histogram
    # within 1 % (0.7 ms at ~70 ms); the noise of both runs' windows is the judge's.
    judge.client({"stages": first.summary["stages"] + second.summary["stages"]})
    judge.close(
        ttft[1], ttft[0], 0.02 * ttft[0], Stat.MEDIAN, "TTFT p50 of a second unique run against the first"
    )
    assert first.summary["run"]["reproducibility"]["salt"] != second.summary["run"]["reproducibility"]["salt"]
    # On purpose: the same prompt every time, served from the cache after the first request: a
    # hit skips the prefill (~60 ms of ~70), so its TTFT is under half a miss's.
    judge.during(first.summary["stages"][0]["window_ns"][0])
    judge.at_most(ttft[3], 0.5 * ttft[0], Stat.MEDIAN, "TTFT p50 of prefix-cache hits")
    server = hits.summary["stages"][0].get("server") or {}
    assert server.get("prefix_cache_hit_rate", 0) > 0.5, server
    assert (first.summary["stages"][0].get("server") or {}).get("prefix_cache_hit_rate", 0) < 0.1
    # The exact repeat measures cache hits, and says so.
    judge.at_most(ttft[4], 0.5 * ttft[0], Stat.MEDIAN, "TTFT p50 of a run repeated with its salt")
    warnings = " ".join(repeat.summary["stages"][0]["warnings"])
    assert "prefix cache served" in warnings and "meant to be unique" in warnings, warnings


def test_a_distributed_run_fails_fast_too(run_locust: RunLocust) -> None:
    with start_sim(["--fault", "http_500", "--fault-rate", "1"]) as sim:
        run = run_locust(sim.url, "--processes", "2", users=4, run_time="30s", expect_code=None)
    summary = assert_verdict(run, ExitCode.COULD_NOT_START, 'every request failed: HTTP 500 "simulated')
    assert summary["run"]["stopped"]["process"] in ("worker-0", "worker-1")


def test_ctrl_c_on_a_distributed_run_loses_no_worker(tmp_path: Path) -> None:
    with start_sim(["--ttft-ms", "20", "--step-ms", "5"]) as sim:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                str(REPO / "locustfiles/chat.py"),
                "--headless",
                "--processes",
                "2",
                *own_master_port(["--processes"]),
                "-u",
                "4",
                "-r",
                "4",
                "-t",
                "60s",
                "--host",
                sim.url,
                "--max-tokens",
                "64",
                "--results-dir",
                str(tmp_path),
                "--run-id",
                "cut",
                "--only-summary",
                "--loglevel",
                "WARNING",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        time.sleep(12)
        os.killpg(proc.pid, signal.SIGINT)  # master and workers at once, as a terminal does
        output, _ = proc.communicate(timeout=90)
    summary = read_checked(tmp_path / "cut" / "summary.json")
    assert proc.returncode == ExitCode.INTERRUPTED, output[-3000:]
    assert "Traceback" not in output
    assert summary["exit"]["name"] == "interrupted" and summary["run"]["lost_workers"] == []
    # Every worker's final delta arrived: the master's counts are every record's.
    records = sum(entry["records"] for entry in summary["run"]["records"])
    stage = summary["stages"][0]
    req = stage["requests"]
    assert records == req["ok"] + req["failed"] + req["unfinished"] + req["warmup"] + req["drain"] > 0
