"""A sweep's largest level against this machine's limits before the wait for its server.

The Locust child checks each process's share once its processes are known (``locust/limits.py``),
but only after the wait, and a model can take minutes to load. A plan that the limits refuse
even spread over the most processes ``--processes`` could start is refused here, at once; the
soft limit is left to the child to raise.
"""

from __future__ import annotations

from llmload.cli.processes import Cores, Load
from llmload.core.limits import Streams, destination
from llmload.run.limits import ensure


def check_early(host: str, load: Load, processes: int | None, where: Cores) -> None:
    """``processes``: as given (0: one), or None for auto, which starts at most one per free
    core. Raises ``PlanError``."""
    if load.streams is None:  # open loop: every process holds its own --max-in-flight
        return
    most = max(1, where.free if processes is None else processes)
    need = Streams(users=load.streams).need(destination(host.rstrip("/")), workers=most, here=most)
    ensure(need, raise_soft=False)
