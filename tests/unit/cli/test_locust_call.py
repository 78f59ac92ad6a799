"""A search's probe and a client-bound rerun are runs of their own: the sweep's options, with
the levels chosen for them and none of the sweep's other ways of choosing levels."""

from __future__ import annotations

from llmload.cli.rerun import own_run
from llmload.cli.sweep import _parser as sweep_parser
from llmload.cli.sweep import locust_command
from llmload.config.options import sweep_options


def _sweep(*argv: str) -> list[str]:
    return ["--host", "http://h", *argv]


def test_a_run_of_its_own_keeps_the_sweeps_options_but_its_ways_of_choosing_levels() -> None:
    args = sweep_parser().parse_args(
        _sweep("--ramp", "1:64:8", "--max-tokens", "99", "--run-id", "r", "--", "--model", "m")
    )
    again = own_run(args, "r-rerun", levels="8,16", processes=4)
    assert (again.run_id, again.levels, again.processes) == ("r-rerun", "8,16", 4)
    assert again.ramp is None and not again.until_saturated
    assert again.max_tokens == "99" and again.locust_args == ["--model", "m"]
    assert args.run_id == "r" and args.ramp == "1:64:8"  # the sweep's own are left as they were
    command = locust_command(again, "http://h")
    assert "--ramp" not in command and command[command.index("--levels") + 1] == "8,16"
    assert command[command.index("--processes") + 1] == "4" and command[-2:] == ["--model", "m"]


def test_every_way_of_choosing_levels_is_dropped_from_the_command_line() -> None:
    # own_run drops these by name: each is a sweep option, so a name that drifted would show here
    assert {"rates", "ramp", "until_saturated", "levels"} <= {o.dest for o in sweep_options()}
    args = sweep_parser().parse_args(_sweep("--rates", "2,30", "--until-saturated"))
    command = locust_command(own_run(args, "p", levels="4"), "http://h")
    assert "--rates" not in command and "--until-saturated" not in command
