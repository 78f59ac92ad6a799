"""The limits ``core/limits.py`` judges, read from this process and host, and acted on: the soft
open-file limit raised where the plan needs it and the hard limit allows, or the plan refused."""

from __future__ import annotations

import os
import resource
from pathlib import Path

from llmload.core.limits import Check, Limits, Need, PortRange, port_range, refusal

PROC = Path("/proc")


def read_limits(proc: Path = PROC) -> Limits:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return Limits(_finite(soft), _finite(hard), _open_files(proc), _ports(proc))


def _finite(limit: int) -> int | None:
    return None if limit == resource.RLIM_INFINITY else limit


def _open_files(proc: Path) -> int:
    try:
        return len(os.listdir(proc / "self" / "fd")) - 1  # less the listing's own descriptor
    except OSError:  # no /proc: FILES_SPARE stands for them
        return 0


def _ports(proc: Path) -> PortRange | None:
    sysctl = proc / "sys" / "net" / "ipv4"
    try:
        span = (sysctl / "ip_local_port_range").read_text()
    except OSError:  # not Linux: no range to judge by
        return None
    try:
        reserved = (sysctl / "ip_local_reserved_ports").read_text()
    except OSError:
        reserved = ""
    return port_range(span, reserved)


def ensure(need: Need, *, raise_soft: bool = True) -> str | None:
    """Refuse a plan beyond the limits (a ``PlanError``), else raise the soft open-file limit if
    the plan needs more (unless ``raise_soft`` is off: the processes that hold the connections
    raise their own). The line that says what was raised, or None."""
    check = Check(need, read_limits())
    if check.refused:
        raise refusal(check)
    target = check.raise_soft_to
    if target is None or not raise_soft:
        return None
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return check.raised_line(target)
