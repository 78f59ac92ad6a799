"""Errors the user can fix, one tree; what a request's failure is, one enum.

```
LlmloadError                 a problem the user can fix; printed as one line, non-zero exit
 ├── ConfigError             a bad option or input file: names the option and its value
 ├── PlanError               the plan cannot run here (free cores, open files, ports): its figures
 ├── TargetError             the target cannot be used (unreachable, no models, not ready)
 ├── SimStartError           the embedded simulator did not come up: its stderr
 ├── ResultsError            a results directory cannot be read or written
 └── HistoryError            the results store (docs/history.md) cannot be opened, read or written
```

A request's failure is never raised past the user: it is data, an ``ErrorKind`` on the
request's record, counted and reported. Anything else that goes wrong is a bug and raises.
"""

from __future__ import annotations

from enum import StrEnum


class LlmloadError(Exception):
    """Base of every error meant for the user rather than for a traceback."""

    exit_code = 2


class ConfigError(LlmloadError):
    """A bad option, environment variable or input file, caught before the run starts."""

    def __init__(self, option: str, value: object, problem: str) -> None:
        self.option = option
        self.value = value
        self.problem = problem
        super().__init__(f"{option}={value!r}: {problem}")


class PlanError(LlmloadError):
    """The machine cannot carry the plan (its free cores, a process's open files, the host's
    ephemeral ports): said before any load is sent, with the figures and what to change."""


class SimStartError(LlmloadError, RuntimeError):
    """The simulator did not come up; the message carries its stderr. An ``LlmloadError``: a
    wrong ``--sim-arg`` is the user's to fix, said in one line by the command, not a traceback."""


class TargetError(LlmloadError):
    """The target server cannot be used for this run."""


class ResultsError(LlmloadError):
    """A results directory is missing, unreadable or not llmload's."""


class HistoryError(LlmloadError):
    """The results store cannot be opened, read or written: a run says so in one line and
    loses nothing else; ``llmload history`` exits with it."""


class ErrorKind(StrEnum):
    """Why one request failed, classified from what the client observed.

    The classification never trusts the server to name its own fault: a simulator fault and a
    real server's misbehaviour that look the same on the wire land in the same kind.
    """

    CONNECT_ERROR = "connect_error"  # refused, reset or TLS failure before the request was sent
    CONNECT_TIMEOUT = "connect_timeout"
    FIRST_TOKEN_TIMEOUT = "first_token_timeout"
    STALL_TIMEOUT = "stall_timeout"  # too long between two reads after the first token
    TOTAL_TIMEOUT = "total_timeout"
    HTTP_429 = "http_429"
    HTTP_4XX = "http_4xx"
    HTTP_5XX = "http_5xx"
    STREAM_BROKEN = "stream_broken"  # closed or reset before [DONE] / end of body
    BAD_PAYLOAD = "bad_payload"  # malformed HTTP framing, SSE or JSON
    ERROR_EVENT = "error_event"  # the server sent an error object inside the stream
    CHECK_FAILED = "check_failed"  # the answer arrived, and the scenario's own check rejected it

    @classmethod
    def of_status(cls, status: int) -> ErrorKind:
        """An answer whose status was not 200."""
        if status == 429:
            return cls.HTTP_429
        if 400 <= status < 500:
            return cls.HTTP_4XX
        if status >= 500:
            return cls.HTTP_5XX
        return cls.BAD_PAYLOAD  # 1xx/3xx/2xx-but-not-200: not an answer we can measure
