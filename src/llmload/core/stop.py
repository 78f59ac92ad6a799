"""Why a run ended before its plan did: summary.json's ``run.stopped``.

One process decides it (its first requests all failed alike: ``failfast.py``; SIGINT or
SIGTERM: the Locust roles), a worker ships it to the master in its delta (``run/delta.py``),
and the verdict reads it back from the summary (``results/verdict.py``).

The JSON form is the one summary.json has always had, and docs/summary.schema.json checks:
``by`` first, then the kind's own keys, and ``process`` last, only where a worker stopped
rather than the process that writes the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from llmload.protocol.jsonvalue import JSON, JSONObject, integer, optional_integer, optional_string


@dataclass(frozen=True, slots=True, kw_only=True)
class Stop:
    by: ClassVar[str]
    process: str | None = None  # the worker that stopped; None: the summarising process

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"by": self.by}
        out.update({f.name: getattr(self, f.name) for f in fields(self) if f.name != "process"})
        if self.process is not None:
            out["process"] = self.process
        return out

    @staticmethod
    def from_json(data: JSONObject) -> Stop:
        """From summary.json or a worker's delta; a key an older writer left out takes the
        value the verdict assumed for it."""
        process = optional_string(data.get("process"), "stopped.process")
        by = data.get("by")
        if by == FailedFast.by:
            status = data.get("status")
            return FailedFast(
                kind=str(data.get("kind", "?")),
                status=optional_integer(status, "stopped.status"),
                message=str(data.get("message") or ""),
                requests=integer(data.get("requests", 0), "stopped.requests"),
                process=process,
            )
        if by == Interrupted.by:
            return Interrupted(stage=integer(data.get("stage", 0), "stopped.stage"), process=process)
        raise ValueError(f"stopped.by: expected fail_fast or interrupt, got {by!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class FailedFast(Stop):
    """The first requests of a process all failed the same way (``failfast.py``)."""

    by: ClassVar[str] = "fail_fast"
    kind: str  # an ErrorKind value
    status: int | None  # the HTTP status, where the failure had one other than 200
    message: str  # the server's answer, shortened
    requests: int  # how many failed before the run stopped


@dataclass(frozen=True, slots=True, kw_only=True)
class Interrupted(Stop):
    """SIGINT or SIGTERM."""

    by: ClassVar[str] = "interrupt"
    stage: int  # the stage it cut short
