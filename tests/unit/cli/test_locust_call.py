"""The run a sweep-like command hands Locust: parsed once, copied, never changed. A search's
probe and a client-bound rerun are runs of their own: the sweep's options, with the levels
chosen for them and none of the sweep's other ways of choosing levels."""

from __future__ import annotations

import dataclasses

import pytest

from llmload.cli.locust_call import LocustCall
from llmload.cli.sweep import _parser as sweep_parser
from llmload.config.options import sweep_options


def _call(*argv: str) -> LocustCall:
    return LocustCall.parsed(sweep_parser().parse_args(["--host", "http://h", *argv]))


def test_a_run_of_its_own_keeps_the_sweeps_options_but_its_ways_of_choosing_levels() -> None:
    sweep = _call("--ramp", "1:64:8", "--max-tokens", "99", "--run-id", "r", "--", "--model", "m")
    again = sweep.own_run("r-rerun", processes=4, levels="8,16")
    assert (again.run_id, again.options["levels"], again.processes) == ("r-rerun", "8,16", 4)
    assert again.options["ramp"] is None and not again.options["until_saturated"]
    assert again.options["max_tokens"] == "99" and again.tail == ("--model", "m")
    assert sweep.run_id == "r" and sweep.options["ramp"] == "1:64:8"  # the sweep's own are left
    command = again.command("http://h")
    assert "--ramp" not in command and command[command.index("--levels") + 1] == "8,16"
    assert command[command.index("--processes") + 1] == "4" and command[-2:] == ["--model", "m"]


def test_every_way_of_choosing_levels_is_dropped_from_the_command_line() -> None:
    # own_run drops these by name: each is a sweep option, so a name that drifted would show here
    assert {"rates", "ramp", "until_saturated", "levels"} <= {o.dest for o in sweep_options()}
    command = _call("--rates", "2,30", "--until-saturated").own_run("p", levels="4").command("http://h")
    assert "--rates" not in command and "--until-saturated" not in command


def test_a_probe_at_a_rate_adds_it_after_the_dashes() -> None:
    probe = _call("--", "--model", "m").own_run("p", tail=("--rates", "7"))
    assert probe.command("http://h")[-4:] == ["--model", "m", "--rates", "7"]


def test_the_call_cannot_be_changed_in_place_nor_given_an_option_it_has_not() -> None:
    call = _call("--levels", "1,2")
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.processes = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        call.options["levels"] = "4"  # type: ignore[index]
    with pytest.raises(AssertionError, match="not a sweep option"):
        call.with_(level="4")


def test_processes_auto_is_not_passed_on_and_zero_is_one_process() -> None:
    assert "--processes" not in _call().command("http://h")  # auto: resolved before the child
    assert "--processes" not in _call("--processes", "0").command("http://h")
    assert _call("--processes", "2").command("http://h")[-2:] == ["--processes", "2"]
