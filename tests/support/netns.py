"""Network namespaces for tests whose traffic must really cross hosts (root only).

``Lab`` creates namespaces named ``llt<pid>-<name>`` (so concurrent test runs never collide), a
bridge in one of them, and links from the others to it; every address it assigns lives only
inside its own namespaces, and closing it (a finalizer, even on failure) deletes them, which
deletes every link in them. Namespaces left by a test run that was killed are removed the next
time a ``Lab`` starts.

A link can add a one-way delay on the far namespace's egress: with ``tc netem`` where the kernel
has it, else through a userspace delay line (this module run as ``python -m tests.support.netns
delay A B MS``): two TAP devices, frames from A to B held for MS milliseconds, B to A at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import struct
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from llmload.sim.process import ANNOUNCE_PREFIX

REPO = Path(__file__).resolve().parents[2]
_PREFIX = "llt"
_TUNSETIFF, _IFF_TAP, _IFF_NO_PI = 0x400454CA, 0x0002, 0x1000


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=10)


def can_use_netns() -> str | None:
    """None when namespaces can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root (CI runs as root)"
    if subprocess.run(["ip", "netns", "list"], capture_output=True, check=False).returncode:
        return "`ip netns` is not available"
    return None


def _remove_stale() -> None:
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    for line in listing.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        pid = name.removeprefix(_PREFIX).split("-", 1)[0]
        if name.startswith(_PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


class Lab:
    def __init__(self) -> None:
        _remove_stale()
        self.tag = f"{_PREFIX}{os.getpid()}"
        self.namespaces: list[str] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.netem: bool | None = None

    def __enter__(self) -> Lab:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    p.wait(5)
            if p.stdout is not None:
                p.stdout.close()
        for ns in reversed(self.namespaces):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        self.namespaces.clear()

    def ns(self, name: str) -> str:
        full = f"{self.tag}-{name}"
        ip("netns", "add", full)
        self.namespaces.append(full)
        ip("-n", full, "link", "set", "lo", "up")
        return full

    @staticmethod
    def exec(ns: str) -> list[str]:
        return ["ip", "netns", "exec", ns]

    @contextlib.contextmanager
    def sim(self, ns: str, address: str, out: Path, *args: str) -> Iterator[str]:
        """``python -m llmload.sim`` inside ``ns`` listening on ``address``; yields its URL,
        stops it (SIGTERM) after. Its output goes to ``out``."""
        with out.open("wb") as f:
            proc = subprocess.Popen(
                [
                    *self.exec(ns),
                    sys.executable,
                    "-m",
                    "llmload.sim",
                    "--host",
                    address,
                    "--port",
                    "0",
                    *args,
                ],
                cwd=REPO,
                stdout=f,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 20
                while not out.read_text().endswith("\n"):
                    # not timing: a bounded wait for the process's first line
                    assert proc.poll() is None and time.monotonic() < deadline, out.read_text()
                    time.sleep(0.05)
                line = out.read_text().splitlines()[0]
                assert line.startswith(ANNOUNCE_PREFIX), line
                yield line.removeprefix(ANNOUNCE_PREFIX)
            finally:
                proc.terminate()
                proc.wait(10)

    def bridge(self, ns: str, address: str) -> None:
        """A bridge ``br0`` in ``ns``, with ``address`` (CIDR) on it."""
        ip("-n", ns, "link", "add", "br0", "type", "bridge")
        ip("-n", ns, "addr", "add", address, "dev", "br0")
        ip("-n", ns, "link", "set", "br0", "up")

    def star(self, hub: tuple[str, str], *spokes: tuple[str, str]) -> tuple[str, list[str]]:
        """A namespace per ``(name, address)``: the hub's holds the bridge (its address on it),
        each spoke's is linked to it by a veth pair. Returns the hub's and the spokes' names."""
        hub_ns = self.ns(hub[0])
        self.bridge(hub_ns, f"{hub[1]}/24")
        spaces = [self.ns(name) for name, _ in spokes]
        for ns, (_, address) in zip(spaces, spokes, strict=True):
            self.link(ns, f"{address}/24", hub_ns)
        return hub_ns, spaces

    def has_netem(self, ns: str) -> bool:
        if self.netem is None:
            probe = subprocess.run(
                ["tc", "-n", ns, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "0ms"],
                capture_output=True,
                check=False,
            )
            self.netem = probe.returncode == 0
            subprocess.run(
                ["tc", "-n", ns, "qdisc", "del", "dev", "lo", "root"], capture_output=True, check=False
            )
        return self.netem

    def link(
        self, ns: str, address: str, bridge_ns: str, delay_ms: float | None = None, *, userspace: bool = False
    ) -> str:
        """Connect ``ns`` (as ``eth0`` with ``address``) to the bridge; ``delay_ms`` on its
        egress. Returns how: ``veth``, ``veth+netem`` or ``tap delay line``."""
        peer = f"v-{ns.rsplit('-', 1)[1]}"[:15]
        if userspace or (delay_ms and not self.has_netem(ns)):
            self._delay_line(ns, peer, bridge_ns, delay_ms or 0.0)
            how = "tap delay line"
        else:
            ip("-n", bridge_ns, "link", "add", peer, "type", "veth", "peer", "name", "eth0", "netns", ns)
            how = "veth"
        ip("-n", bridge_ns, "link", "set", peer, "master", "br0")
        ip("-n", bridge_ns, "link", "set", peer, "up")
        ip("-n", ns, "addr", "add", address, "dev", "eth0")
        ip("-n", ns, "link", "set", "eth0", "up")
        if delay_ms and how == "veth":
            subprocess.run(
                ["tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "netem", "delay", f"{delay_ms}ms"],
                check=True,
                capture_output=True,
            )
            how = "veth+netem"
        return how

    def _delay_line(self, ns: str, peer: str, bridge_ns: str, delay_ms: float) -> None:
        # Both taps are created in the bridge's namespace, then one moves to ``ns``: the open
        # descriptor follows the device.
        proc = subprocess.Popen(
            [
                *self.exec(bridge_ns),
                sys.executable,
                "-m",
                "tests.support.netns",
                "delay",
                "eth0",
                peer,
                str(delay_ms),
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        self.procs.append(proc)
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("the delay line did not start")
        ip("-n", bridge_ns, "link", "set", "eth0", "netns", ns)


def _tap(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TAP | _IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def _send(fd: int, frame: bytes) -> None:
    with contextlib.suppress(OSError):  # the device is not up (yet): the frame is dropped
        os.write(fd, frame)


def delay_line(a_name: str, b_name: str, delay_ms: float) -> None:
    """Forward frames between two TAP devices: A to B after ``delay_ms``, B to A at once."""
    a, b = _tap(a_name), _tap(b_name)
    with contextlib.suppress(OSError):  # like netem, in the kernel: nobody else delays a frame
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    print("ready", flush=True)
    delay_ns = int(delay_ms * 1e6)
    held: deque[tuple[int, bytes]] = deque()  # (due, frame), in order: one fixed delay
    poller = select.poll()
    poller.register(a, select.POLLIN)
    poller.register(b, select.POLLIN)
    while True:
        now = time.perf_counter_ns()
        while held and held[0][0] <= now:
            _send(b, held.popleft()[1])
        timeout = None if not held else max(0, (held[0][0] - now) // 1_000_000)
        for fd, _ in poller.poll(timeout):
            while True:
                try:
                    frame = os.read(fd, 65536)
                except (BlockingIOError, OSError):
                    break
                if fd == b:
                    _send(a, frame)
                elif delay_ns:
                    held.append((time.perf_counter_ns() + delay_ns, frame))
                else:
                    _send(b, frame)


if __name__ == "__main__":
    if sys.argv[1:2] == ["delay"]:
        delay_line(sys.argv[2], sys.argv[3], float(sys.argv[4]))
