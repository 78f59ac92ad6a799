"""The limits' arithmetic: what a plan needs of open files and ports, what is raised, what refused."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llmload.core.limits import (
    FILES_SPARE,
    Check,
    Limits,
    Need,
    PortRange,
    Streams,
    port_range,
    refusal,
)

PORTS = PortRange(32768, 60999)  # Linux's default: 28,232 ports
TARGET = "127.0.0.1:8000"


def limits(soft: int | None, hard: int | None, *, open_: int = 8, ports: PortRange | None = PORTS) -> Limits:
    return Limits(soft, hard, open_, ports)


def test_the_port_range_is_read_as_the_kernel_writes_it_less_the_reserved_ports_inside_it() -> None:
    assert port_range("32768\t60999\n").usable == 28_232
    ranged = port_range("32768\t60999\n", "8080,32768-32777,40000,61000-61010\n")
    assert (ranged.low, ranged.high, ranged.reserved) == (32768, 60999, 11)
    assert ranged.usable == 28_221
    assert "less 11 reserved" in ranged.text()
    assert port_range("1024 65535", "").usable == 64_512


def test_a_plan_within_every_limit_is_neither_refused_nor_raised() -> None:
    check = Check(Need(200, TARGET), limits(1024, 4096))
    assert check.files_needed == 200 + 8 + FILES_SPARE
    assert check.ports_needed == 200
    assert not check.refused and check.raise_soft_to is None


def test_a_soft_limit_under_the_need_is_raised_to_twice_it_within_the_hard_limit() -> None:
    check = Check(Need(200, TARGET), limits(64, 4096))
    assert not check.refused
    assert check.raise_soft_to == 2 * check.files_needed
    assert Check(Need(2000, TARGET), limits(64, 3000)).raise_soft_to == 3000  # the hard limit caps it
    assert Check(Need(200, TARGET), limits(64, None)).raise_soft_to == 2 * check.files_needed
    line = check.raised_line(480)
    assert line.startswith("raised the open-file limit (ulimit -n) from 64 to 480 (hard limit 4,096)")
    assert "200 connections (one per stream) + 8 files open + 32 spare need 240 open files" in line


def test_a_hard_limit_under_the_need_refuses_in_one_line_with_the_numbers_and_what_to_change() -> None:
    check = Check(Need(200, TARGET, shared=200), limits(64, 64))
    assert check.refused and check.files_short and not check.ports_short
    assert check.raise_soft_to is None
    error = refusal(check)
    message = str(error)
    assert "\n" not in message
    assert error.exit_code == 2  # the code of --processes auto's refusal
    assert "200 connections (one per stream) + 8 files open + 32 spare need 240 open files" in message
    assert "over the hard limit of 64" in message
    assert "ulimit -Hn 240" in message and "--ulimit nofile=240" in message
    processes = math.ceil(200 / (64 - 8 - FILES_SPARE))
    assert f"over {processes} or more worker processes (--processes {processes}, or more workers)" in message


def test_a_worker_is_told_the_fleet_it_takes_to_carry_the_whole_plan() -> None:
    need = Streams(users=1000).need(TARGET, workers=4)
    assert need.connections == 250 and need.shared == 1000
    message = Check(need, limits(64, 158)).refusal()  # 118 connections a process
    assert "250 connections" in message and "the 1,000 streams over 9 or more worker processes" in message


def test_an_open_loop_process_is_told_to_lower_its_in_flight_cap() -> None:
    need = Streams(users=0, in_flight=1024).need(TARGET, workers=4)
    assert need.connections == 1024 and need.shared == 0
    message = Check(need, limits(1024, 1024)).refusal()
    assert f"lower --max-in-flight to {1024 - 8 - FILES_SPARE:,}" in message
    assert "--processes" not in message


def test_a_hard_limit_the_process_already_fills_cannot_be_spread() -> None:
    message = Check(Need(10, TARGET, shared=10), limits(30, 30, open_=30)).refusal()
    assert "run fewer streams" in message and "--processes" not in message


def test_the_ports_of_a_host_are_shared_by_its_processes() -> None:
    check = Check(Need(8000, TARGET, processes=4, shared=32_000), limits(None, None))
    assert check.ports_needed == 32_000 and check.ports_short and not check.files_short
    message = check.refusal()
    assert "each of 4 processes" not in message  # the files fit: only the ports are said
    assert "4 processes x 8,000 connections to 127.0.0.1:8000 need 32,000 ephemeral ports" in message
    assert "over the 28,232 of ip_local_port_range 32768-60999" in message
    assert 'sysctl -w net.ipv4.ip_local_port_range="1024 65535"' in message
    assert "more source addresses" in message


def test_ports_beyond_the_widest_range_are_sent_to_more_addresses_only() -> None:
    message = Check(Need(70_000, TARGET), limits(None, None)).refusal()
    assert "sysctl" not in message and "more source addresses" in message
    widest = Check(Need(64_600, TARGET), limits(None, None, ports=PortRange(1024, 65535))).refusal()
    assert "sysctl" not in widest


def test_both_limits_short_are_said_in_the_same_line() -> None:
    check = Check(Need(30_000, TARGET, shared=30_000), limits(1024, 1024))
    message = check.refusal()
    assert check.files_short and check.ports_short
    assert "\n" not in message and "open files" in message and "ephemeral ports" in message


def test_unknown_ports_and_unlimited_files_never_refuse() -> None:
    assert not Check(Need(10**6, TARGET), limits(None, None, ports=None)).refused


def test_a_plans_share_per_process() -> None:
    assert Streams(users=200).need(TARGET) == Need(200, TARGET, 1, shared=200)
    assert Streams(users=201).need(TARGET, workers=2, here=2) == Need(101, TARGET, 2, shared=201)
    # a sweep of levels and rates: a rate stage's cap can be the larger
    assert Streams(users=8, in_flight=64).need(TARGET, workers=2).connections == 64


@given(
    need=st.builds(Need, st.integers(1, 100_000), st.just(TARGET), st.integers(1, 64)),
    open_=st.integers(0, 1000),
    soft=st.integers(0, 2_000_000),
    extra=st.integers(0, 2_000_000),
    ports=st.builds(PortRange, st.integers(1024, 32768), st.integers(32768, 65535)),
)
def test_refused_exactly_when_a_limit_is_short_and_raised_only_within_the_hard_limit(
    need: Need, open_: int, soft: int, extra: int, ports: PortRange
) -> None:
    hard = soft + extra
    check = Check(need, Limits(soft, hard, open_, ports))
    connections, processes = need.connections, need.processes
    files = connections + open_ + FILES_SPARE
    assert check.refused == (files > hard or connections * processes > ports.usable)
    raised = check.raise_soft_to
    if raised is not None:
        assert files > soft and files <= raised <= hard
    elif not check.files_short:
        assert files <= soft
    if check.refused:
        assert "\n" not in check.refusal()


@pytest.mark.parametrize("text", ["", "\n", ",\n"])
def test_no_reserved_ports(text: str) -> None:
    assert port_range("32768 60999", text).reserved == 0
