"""Optional real-time scheduling for the simulator's loop (``--realtime``).

On a shared machine the simulator's steps are late not because it is slow but because the kernel
runs someone else when its timer fires: with two CPU-bound processes on a 2-core box, step
lateness p99 measured 3.5-5.4 ms under the normal scheduler, 0.1-0.5 ms at SCHED_FIFO priority 1
(raising ``nice`` did not help). A ground-truth server may claim the CPU first, since it uses
little of it; it needs CAP_SYS_NICE, so the request can be refused, and then the simulator says
so and runs as usual (its reported lateness shows the cost).
"""

from __future__ import annotations

import os


def request_realtime() -> str | None:
    """Put the calling thread at SCHED_FIFO priority 1; None on success, else why not."""
    setter = getattr(os, "sched_setscheduler", None)
    policy = getattr(os, "SCHED_FIFO", None)
    if setter is None or policy is None:
        return "SCHED_FIFO is not available on this platform"
    try:
        setter(0, policy, os.sched_param(1))
    except OSError as exc:
        return f"SCHED_FIFO refused ({exc.strerror}); needs CAP_SYS_NICE"
    return None


def is_realtime() -> bool:
    getter = getattr(os, "sched_getscheduler", None)
    policy = getattr(os, "SCHED_FIFO", None)
    return getter is not None and policy is not None and getter(0) == policy
