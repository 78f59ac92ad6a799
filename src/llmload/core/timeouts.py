"""A request's time limits: to its first token, between two reads, in all. The recorder
enforces them (``recorder.py``); the transports ask it for the next read's deadline."""

from __future__ import annotations

from dataclasses import dataclass

from llmload.errors import ConfigError, ErrorKind

_NS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Per-request limits in seconds; None means no limit (the recorder enforces them)."""

    first_token_s: float | None = 300.0
    stall_s: float | None = 120.0
    total_s: float | None = None

    def __post_init__(self) -> None:
        for flag, value in (
            ("--first-token-timeout", self.first_token_s),
            ("--stall-timeout", self.stall_s),
            ("--request-timeout", self.total_s),
        ):
            if value is not None and value < 0:
                raise ConfigError(flag, value, "must be 0 or more (0: no limit)")

    @classmethod
    def from_flags(cls, first_token_s: float, stall_s: float, total_s: float) -> Timeouts:
        """From the flags' seconds, in which 0 means no limit."""
        return cls(first_token_s or None, stall_s or None, total_s or None)

    def deadline_ns(self, sent_ns: int, first_token_ns: int | None, last_read_ns: int) -> int | None:
        """When the next read must have come: the first token's or the stall's limit, and the
        total's; None without a limit."""
        limits = []
        if self.total_s is not None:
            limits.append(sent_ns + int(self.total_s * _NS))
        if first_token_ns is None and self.first_token_s is not None:
            limits.append(sent_ns + int(self.first_token_s * _NS))
        elif first_token_ns is not None and self.stall_s is not None:
            limits.append(last_read_ns + int(self.stall_s * _NS))
        return min(limits) if limits else None

    def kind(self, t_ns: int, sent_ns: int, first_token_ns: int | None) -> ErrorKind:
        """Which limit a request that timed out at ``t_ns`` ran into (the total's within 1 ms)."""
        if self.total_s is not None and t_ns - sent_ns >= int(self.total_s * _NS) - 1_000_000:
            return ErrorKind.TOTAL_TIMEOUT
        if first_token_ns is None:
            return ErrorKind.FIRST_TOKEN_TIMEOUT
        return ErrorKind.STALL_TIMEOUT
