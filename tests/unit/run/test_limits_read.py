"""The limits as read from this process and a /proc tree, and what ``ensure`` does with them."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from llmload.core.limits import Need, PortRange
from llmload.errors import PlanError
from llmload.run.limits import ensure, read_limits


def fake_proc(tmp_path: Path, *, span: str | None, reserved: str | None, fds: int) -> Path:
    sysctl = tmp_path / "sys" / "net" / "ipv4"
    sysctl.mkdir(parents=True)
    if span is not None:
        (sysctl / "ip_local_port_range").write_text(span)
    if reserved is not None:
        (sysctl / "ip_local_reserved_ports").write_text(reserved)
    fd = tmp_path / "self" / "fd"
    fd.mkdir(parents=True)
    for n in range(fds + 1):  # the listing's own descriptor is one of them
        (fd / str(n)).touch()
    return tmp_path


def test_the_limits_are_read_from_proc_and_getrlimit(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, span="32768\t60999\n", reserved="32768-32769\n", fds=9)
    found = read_limits(proc)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert (found.files_soft, found.files_hard) == (
        None if soft == resource.RLIM_INFINITY else soft,
        None if hard == resource.RLIM_INFINITY else hard,
    )
    assert found.files_open == 9
    assert found.ports == PortRange(32768, 60999, 2)


def test_no_range_to_read_is_no_range_to_judge_by(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, span=None, reserved=None, fds=3)
    assert read_limits(proc).ports is None
    proc2 = fake_proc(tmp_path / "b", span="1024 65535", reserved=None, fds=3)
    assert read_limits(proc2).ports == PortRange(1024, 65535, 0)


def test_this_process_as_it_is() -> None:
    found = read_limits()
    assert found.files_open > 0
    assert Path("/proc/sys/net/ipv4/ip_local_port_range").exists() == (found.ports is not None)


def test_a_plan_over_the_hard_limit_is_refused_and_nothing_is_changed() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before[1] == resource.RLIM_INFINITY:
        pytest.skip("no finite hard limit to exceed")
    with pytest.raises(PlanError, match="over the hard limit"):
        ensure(Need(before[1], "127.0.0.1:8000"))
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before


def test_a_plan_within_the_soft_limit_changes_nothing() -> None:
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert ensure(Need(1, "127.0.0.1:8000")) is None
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before


def test_a_soft_limit_under_the_need_is_raised_where_the_hard_limit_allows() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard < 1024:
        pytest.skip("the hard limit leaves no room over the need")
    script = (
        "import resource\n"
        "from llmload.core.limits import Need\n"
        "from llmload.run.limits import ensure\n"
        "print(ensure(Need(100, '127.0.0.1:8000')))\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (48, hard)),
    )
    said, soft = done.stdout.splitlines()
    assert said.startswith("raised the open-file limit (ulimit -n) from 48 to ")
    assert int(soft) == int(said.split(" to ")[1].split(" ")[0].replace(",", "")) > 100
