"""The built-in router in front of ``--replicas``: which replica serves a request.

``round-robin`` deals requests out in turn. ``session`` sends every request that carries a session
key to the replica a stable hash of the key names, so a conversation's turns find their earlier
prompt in that replica's prefix cache (the affinity an llm-d or Dynamo router, or a gateway's
consistent hashing, gives); a request without a key goes round-robin. The hash is CRC-32 of the
key's UTF-8 bytes: Python's ``hash`` of a str is salted per process, and a test that restarts
the simulator must see the same placement.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Final, Literal, TypeAlias

RouterPolicy: TypeAlias = Literal["round-robin", "session"]
ROUTER_POLICIES: Final[tuple[RouterPolicy, ...]] = ("round-robin", "session")
SESSION_HEADER: Final = "x-session-affinity"  # AIPerf's; Cloudflare Workers AI reads it too
# Read when the configured header is absent: what OpenCode sends, and other agents with it.
FALLBACK_SESSION_HEADER: Final = "x-session-id"


def session_key(headers: Mapping[str, str], header: str = SESSION_HEADER) -> str | None:
    """The request's session key: the configured header, else ``X-Session-ID``; None when
    neither is there or the value is blank. ``headers`` are keyed in lower case (``http.py``)."""
    value = headers.get(header) or headers.get(FALLBACK_SESSION_HEADER)
    return value if value and value.strip() else None


def replica_of(key: str, replicas: int) -> int:
    """The replica a session key belongs to: the same for the same key, in every process."""
    return zlib.crc32(key.encode()) % replicas


class Router:
    """Picks a replica index in ``[0, replicas)`` for each request."""

    __slots__ = ("_next", "policy", "replicas")

    def __init__(self, replicas: int, policy: RouterPolicy = "round-robin") -> None:
        if replicas < 1:
            raise ValueError("replicas must be >= 1")
        self.replicas = replicas
        self.policy = policy
        self._next = 0  # the round-robin turn

    def pick(self, session: str | None) -> int:
        if session is not None and self.policy == "session":
            return replica_of(session, self.replicas)
        index = self._next
        self._next = (index + 1) % self.replicas
        return index
