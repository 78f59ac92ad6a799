"""Fail fast: stop a run whose first requests all failed the same way.

A server that refuses every request (a wrong key, a rejected ``--extra-body``, nothing
listening) answers in microseconds, so a closed loop of users turns a 60 s run into hundreds of
thousands of identical failures, a client loop at 100% CPU, and a summary that buries the one
line that matters. The first ``REQUESTS`` requests to finish in a process decide: all failed
with the same kind and HTTP status, and the run stops with that failure as its verdict. One
success, or two kinds of failure, and the check is off for the rest of the run (a server that
fails intermittently is measured, and judged by ``--max-error-rate``).

Twenty requests: enough that a transient hiccup at start (one reset connection) never stops a
run, few enough that even one user against a server that times out at connect (10 s each)
stops within minutes rather than at the end of a long sweep.
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.core.record import CANCELLED, OK, UNFINISHED, RequestRecord
from llmload.core.stop import FailedFast

REQUESTS = 20


@dataclass(slots=True)
class FailFast:
    limit: int = REQUESTS
    seen: int = 0
    first: tuple[str, int | None, str] | None = None  # (kind, status, the server's answer)
    armed: bool = True

    def observe(self, record: RequestRecord) -> FailedFast | None:
        """Feed every finished request; returns the stop (once) when the run should end."""
        if not self.armed or record.outcome in (UNFINISHED, CANCELLED):
            return None
        status = record.status if record.status != 200 else None
        if record.outcome == OK or (self.first is not None and self.first[:2] != (record.outcome, status)):
            self.armed = False
            return None
        if self.first is None:
            self.first = (record.outcome.value, status, record.error_detail or "")
        self.seen += 1
        if self.seen < self.limit:
            return None
        self.armed = False
        kind, status, message = self.first
        return FailedFast(kind=kind, status=status, message=message[:500], requests=self.seen)
