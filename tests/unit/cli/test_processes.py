"""``--processes auto``: the plan's arithmetic, its refusal and what it reads of a sweep's options."""

from __future__ import annotations

import pytest

from llmload.cli.locust_call import LocustCall
from llmload.cli.processes import (
    HEADROOM,
    Asked,
    Cores,
    Load,
    needs_pace,
    plan,
    refusal,
    server_is_here,
)
from llmload.cli.sweep import _parser as sweep_parser
from llmload.config.commands import processes as processes_option
from llmload.errors import ConfigError


def _asked(*argv: str) -> Asked:
    """What a sweep given ``argv`` plans by."""
    return LocustCall.parsed(sweep_parser().parse_args(argv)).asked()


def test_the_option_is_auto_or_a_count() -> None:
    assert processes_option("auto") is None
    assert processes_option("0") == 0
    assert processes_option("3") == 3
    for wrong in ("many", "-1", "1.5"):
        with pytest.raises(ConfigError, match="--processes"):
            processes_option(wrong)


def test_a_plan_gives_each_process_its_capacity_times_the_headroom() -> None:
    load = Load(1000, None, 128)
    planned = plan(load, 50.0, 40_000.0, Cores(8, 0, ""))
    assert planned.events_per_s == 50_000
    assert planned.processes == -(-50_000 // int(40_000 * HEADROOM))  # ceil
    assert planned.fits
    assert plan(Load(10, None, 128), 50.0, 40_000.0, Cores(8, 0, "")).processes == 1


def test_a_plan_beyond_the_free_cores_is_refused_with_its_figures() -> None:
    planned = plan(Load(1000, None, 128), 50.0, 40_000.0, Cores(2, 1, "1 left to the server on this machine"))
    assert not planned.fits
    message = str(refusal(planned))
    assert "1,000 streams x 50 tok/s each bring up to 50,000 events/s" in message
    assert f"one process carries {40_000 * HEADROOM:,.0f}" in message
    assert f"{planned.processes} processes" in message
    assert "1 of 2 cores free (1 left to the server on this machine)" in message
    assert "--processes N" in message and "Kubernetes" in message
    assert refusal(planned).exit_code == 2


def test_one_process_always_fits_even_without_a_free_core() -> None:
    planned = plan(Load(4, None, 128), 50.0, 40_000.0, Cores(1, 0, ""))
    assert planned.processes == 1 and planned.fits


def test_open_loop_load_is_the_rate_times_the_tokens_a_request_may_bring() -> None:
    planned = plan(Load(None, 100.0, 256), None, 40_000.0, Cores(4, 0, ""))
    assert planned.events_per_s == 25_600
    assert not needs_pace(Load(None, 100.0, 256))


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--host", "http://h"], Load(128, None, 256)),
        (["--host", "http://h", "--levels", "1,1000,8", "--max-tokens", "64"], Load(1000, None, 64)),
        (["--host", "http://h", "--ramp", "1:64:8"], Load(64, None, 256)),
        (["--host", "http://h", "--ramp", "rate:1:20:5"], Load(None, 20.0, 256)),
        (["--host", "http://h", "--", "--rates", "2,30"], Load(None, 30.0, 256)),
        (["--host", "http://h", "--max-tokens", "uniform:10:300"], Load(128, None, 300)),
    ],
)
def test_the_load_is_the_sweeps_peak(argv: list[str], expected: Load) -> None:
    assert _asked(*argv).load() == expected


def test_what_follows_the_dashes_is_read_by_the_option_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-mine")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    tail = ["-u", "3", "--model=m1", "--api-key-env", "MY_KEY", "--rate", "9", "--max-tokens", "99"]
    asked = _asked("--host", "http://h", "--max-tokens", "64", "--", *tail)
    assert asked.model == "m1" and asked.api_key == "sk-mine"
    # Locust's own -u and an abbreviation of --rates are Locust's to read; the tail's
    # --max-tokens is the one the child runs with, as its later word wins there too
    assert asked.rates == () and asked.tokens_per_request == 99
    assert _asked("--host", "http://h").api_key == "sk-not-this-one"


def test_only_a_plan_that_could_need_two_processes_asks_the_server_its_pace() -> None:
    assert not needs_pace(Load(1, None, 128))
    assert needs_pace(Load(1000, None, 128))


def test_a_server_on_loopback_or_embedded_shares_the_cores() -> None:
    assert server_is_here("http://127.0.0.1:8000", embedded=False)
    assert server_is_here("http://localhost:8000", embedded=False)
    assert server_is_here("http://[::1]:8000", embedded=False)
    assert server_is_here("http://gpu-box:8000", embedded=True)
    assert not server_is_here("http://gpu-box:8000", embedded=False)


def test_a_wrong_word_after_the_dashes_is_said_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        _asked("--host", "http://h", "--", "--max-tokens")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --max-tokens: expected one argument" in err and "llmload options" in err
    assert len(err.splitlines()) == 2  # the usage line and the error, not every option's usage
    with pytest.raises(ConfigError, match="--max-tokens"):
        _asked("--host", "http://h", "--", "--max-tokens", "abc")
