"""The plan's connections against a process's open-file limit and its host's ephemeral ports.

A stream holds one TCP connection: the lean transport keeps one keep-alive socket per user and
opens another only when the last cannot be reused (an error, a cancel, a server that closed it);
httpx's pool holds one per request in flight over HTTP/1.1; an open-loop process holds one per
request in flight, up to ``--max-in-flight``. A connection is a file descriptor of its process
and an ephemeral port of its host: the kernel gives a connection a local port from
``ip_local_port_range``, less ``ip_local_reserved_ports``, unique per (source address, port,
destination address, port), so every process of a host sending to one server from one address
draws on the same range. A plan beyond either limit fails mid-run with EMFILE or EADDRNOTAVAIL,
recorded as connect errors that read as the server's fault: it is refused before start instead.

The judgement only, on limits read elsewhere (``llmload.run.limits``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llmload.errors import PlanError
from llmload.protocol.origin import parse_origin

# Descriptors a process opens after the check, beside its connections: the results files, the
# exporter's socket and its scrapes, the server's /metrics scrape, a worker's link to the
# master. A 200-stream run here held 207, 7 of them already open when its users started.
FILES_SPARE = 32
# The widest range Linux takes as it is set up: the low end may not go under
# ip_unprivileged_port_start, 1024 unless changed.
_WIDEST = (1024, 65535)


@dataclass(frozen=True, slots=True)
class PortRange:
    """The kernel's ephemeral ports: ``ip_local_port_range``, less the reserved ones in it."""

    low: int
    high: int
    reserved: int = 0

    @property
    def usable(self) -> int:
        return max(0, self.high - self.low + 1 - self.reserved)

    def text(self) -> str:
        less = f", less {self.reserved:,} reserved" if self.reserved else ""
        return f"ip_local_port_range {self.low}-{self.high}{less}"


def port_range(range_text: str, reserved_text: str = "") -> PortRange:
    """The range from ``/proc/sys/net/ipv4/ip_local_port_range`` ("32768\\t60999") and the count
    of ``ip_local_reserved_ports`` ("8080,9000-9010") that falls inside it."""
    low, high = (int(word) for word in range_text.split())
    reserved: set[int] = set()
    for part in reserved_text.replace("\n", "").split(","):
        if not part.strip():
            continue
        first, _, last = part.strip().partition("-")
        start, end = max(int(first), low), min(int(last or first), high)
        reserved.update(range(start, end + 1))
    return PortRange(low, high, len(reserved))


def destination(base_url: str) -> str:
    """``host:port`` of the server a base URL names: what a connection's port is unique to."""
    origin = parse_origin(base_url)
    host = f"[{origin.host}]" if ":" in origin.host else origin.host
    return f"{host}:{origin.port}"


@dataclass(frozen=True, slots=True)
class Limits:
    """What one process may hold, read once before start. ``None``: unlimited, or unknown."""

    files_soft: int | None
    files_hard: int | None
    files_open: int  # descriptors the process holds already
    ports: PortRange | None


@dataclass(frozen=True, slots=True)
class Need:
    """A process's connections at the plan's peak, and the host's processes that hold as many."""

    connections: int
    destination: str  # host:port, the server every connection goes to
    processes: int = 1  # this host's processes, each with as many, sharing its ports
    # The closed-loop streams the whole fleet shares out among its processes, which more
    # processes would divide; 0 where each process holds its own (open loop: --max-in-flight).
    shared: int = 0


@dataclass(frozen=True, slots=True)
class Streams:
    """The most streams a plan holds at once: closed-loop users, shared out among the fleet's
    processes, or an open-loop stage's requests in flight, up to each process's own cap."""

    users: int = 0
    in_flight: int = 0

    def need(self, destination: str, *, workers: int = 1, here: int = 1) -> Need:
        """One process's need, of ``workers`` in the fleet, ``here`` of them on this host."""
        share = math.ceil(self.users / max(workers, 1))
        if self.in_flight > share:
            return Need(self.in_flight, destination, here)
        return Need(share, destination, here, shared=self.users)


@dataclass(frozen=True, slots=True)
class Check:
    need: Need
    limits: Limits

    @property
    def files_needed(self) -> int:
        return self.need.connections + self.limits.files_open + FILES_SPARE

    @property
    def ports_needed(self) -> int:
        return self.need.connections * self.need.processes

    @property
    def files_short(self) -> bool:
        hard = self.limits.files_hard
        return hard is not None and self.files_needed > hard

    @property
    def ports_short(self) -> bool:
        ports = self.limits.ports
        return ports is not None and self.ports_needed > ports.usable

    @property
    def refused(self) -> bool:
        return self.files_short or self.ports_short

    @property
    def raise_soft_to(self) -> int | None:
        """The soft limit to set in-process, where the hard one allows what the plan needs:
        twice the need, room for a web UI edit or reconnects, and no higher, since the
        processes this one starts inherit it and some walk every descriptor up to it."""
        soft, hard = self.limits.files_soft, self.limits.files_hard
        if self.files_short or soft is None or self.files_needed <= soft:
            return None
        doubled = 2 * self.files_needed
        return doubled if hard is None else min(hard, doubled)

    def files_text(self) -> str:
        each = f"each of {self.need.processes} processes: " if self.need.processes > 1 else ""
        held = self.limits.files_open
        return (
            f"{each}{self.need.connections:,} connections (one per stream) + {held:,} files open + "
            f"{FILES_SPARE} spare need {self.files_needed:,} open files"
        )

    def raised_line(self, raised_to: int) -> str:
        return (
            f"raised the open-file limit (ulimit -n) from {self.limits.files_soft:,} to {raised_to:,} "
            f"(hard limit {_count(self.limits.files_hard)}): {self.files_text()}"
        )

    def refusal(self) -> str:
        problems = [text for short, text in ((self.files_short, _files), (self.ports_short, _ports)) if short]
        said = "; and ".join(problem(self) for problem in problems)
        return f"this machine's limits cannot carry the plan: {said}"


def _count(limit: int | None) -> str:
    return "unlimited" if limit is None else f"{limit:,}"


def _files(check: Check) -> str:
    need, hard = check.need, check.limits.files_hard
    assert hard is not None, "only a finite hard limit is short"
    raise_it = (
        f"raise the hard limit (ulimit -Hn {check.files_needed} as root, docker run --ulimit "
        f"nofile={check.files_needed}, LimitNOFILE={check.files_needed} in a systemd unit)"
    )
    budget = hard - check.limits.files_open - FILES_SPARE  # connections one process may hold
    if budget <= 0:
        spread = "run fewer streams"
    elif not need.shared:
        spread = f"lower --max-in-flight to {budget:,}"
    else:
        processes = math.ceil(need.shared / budget)
        spread = (
            f"spread the {need.shared:,} streams over {processes} or more worker processes "
            f"(--processes {processes}, or more workers) or hosts"
        )
    return f"{check.files_text()}, over the hard limit of {hard:,}: {raise_it}, or {spread}"


def _ports(check: Check) -> str:
    need, ports = check.need, check.limits.ports
    assert ports is not None, "only a known range is short"
    who = f"{need.processes} processes x " if need.processes > 1 else ""
    low, high = _WIDEST
    wider = (ports.low, ports.high) != _WIDEST and check.ports_needed <= high - low + 1 - ports.reserved
    widen = f'widen it (sysctl -w net.ipv4.ip_local_port_range="{low} {high}"), or ' if wider else ""
    return (
        f"{who}{need.connections:,} connections to {need.destination} need {check.ports_needed:,} "
        f"ephemeral ports, over the {ports.usable:,} of {ports.text()}: {widen}send from more source "
        f"addresses (workers on more hosts or pods: docs/kubernetes.md), or run fewer streams per host"
    )


def refusal(check: Check) -> PlanError:
    """The plan that would exhaust a process's open files or its host's ephemeral ports,
    refused as ``--processes auto``'s refusal is, with the same exit code."""
    return PlanError(check.refusal())
