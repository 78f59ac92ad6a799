"""Why a run ended before its plan did: summary.json's ``run.stopped``.

One process decides it (its first requests all failed alike: ``failfast.py``; SIGINT or
SIGTERM, or a start the target or the machine refused: the Locust roles), a worker ships it
to the master (in its delta; a refusal in a message of its own, before the worker has a
run), and the verdict reads it back from the summary (``results/verdict.py``).

Its JSON form is declared here and nowhere else: ``by`` names the kind (msgspec's tag), then
the kind's own keys; ``process`` is the worker that stopped, null where the process that writes
the summary did. A key an older writer left out takes the value the verdict assumed for it.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec


class Stop(msgspec.Struct, frozen=True, kw_only=True, tag_field="by"):
    process: str | None = None  # the worker that stopped; None: the summarising process

    @property
    def by(self) -> str:
        return str(self.__struct_config__.tag)


class FailedFast(Stop, frozen=True, kw_only=True, tag="fail_fast"):
    """The first requests of a process all failed the same way (``failfast.py``)."""

    kind: str = "?"  # an ErrorKind value
    status: int | None = None  # the HTTP status, where the failure had one other than 200
    message: str = ""  # the server's answer, shortened
    requests: int = 0  # how many failed before the run stopped


class Interrupted(Stop, frozen=True, kw_only=True, tag="interrupt"):
    """SIGINT or SIGTERM."""

    stage: int = 0  # the stage it cut short


class Refused(Stop, frozen=True, kw_only=True, tag="refused"):
    """The run could not start: the target refused it (a 401, no model to name) or a process's
    limits cannot carry its share. ``line`` is the error's own, as the process said it."""

    line: str = ""


Stopped: TypeAlias = FailedFast | Interrupted | Refused  # every kind: what a decoder is asked for


def stop_of(data: object) -> Stopped:
    """From summary.json or a worker's delta (a ``ValueError`` naming the key when malformed)."""
    stop: Stopped = msgspec.convert(data, Stopped)
    return stop


def with_process(stop: Stopped, process: str) -> Stopped:
    """The same stop, said to come from the worker ``process``."""
    return msgspec.structs.replace(stop, process=process)
