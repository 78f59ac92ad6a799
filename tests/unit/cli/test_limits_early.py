"""``llmload sweep --host``'s check before the wait: refused at once where no process count
could carry the plan, otherwise left to the Locust child."""

from __future__ import annotations

import pytest

from llmload.cli.limits import check_early
from llmload.cli.processes import Cores, Load
from llmload.errors import PlanError

HOST = "http://127.0.0.1:9"


def test_a_level_beyond_the_hosts_ports_is_refused_before_the_wait() -> None:
    said = r"64 processes x 15,625 connections to 127\.0\.0\.1:9 need 1,000,000 ephemeral ports"
    with pytest.raises(PlanError, match=said):  # auto's most processes: one per free core
        check_early(HOST, Load(1_000_000, None, 128), None, Cores(64, 0, ""))


def test_an_open_loop_sweep_and_a_small_one_are_left_to_the_child() -> None:
    check_early(HOST, Load(None, 10_000.0, 128), 0, Cores(1, 0, ""))
    check_early(HOST, Load(4, None, 128), None, Cores(1, 0, ""))
