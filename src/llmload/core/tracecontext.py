"""W3C trace context for each request: a ``traceparent`` whose ids follow from llmload's own.

The trace id and the parent (span) id are a hash of the run's id and the request's id, so a
trace found in Jaeger or Tempo names its request in ``requests.jsonl`` (whose line records the
trace id), and the client span an OTLP export sends for the request (``export/otlp.py``) is the
parent the server's spans hang from. Flags ``01``: sampled, so a server that propagates the
context records its side too.
"""

from __future__ import annotations

from hashlib import blake2b
from typing import NamedTuple

HEADER = "traceparent"


class TraceIds(NamedTuple):
    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits: the client's span of the request, the server's parent

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.span_id}-01"


def trace_ids(run_id: str, request_id: str) -> TraceIds:
    """The ids of a request's trace; never all zeros (which W3C reserves as invalid)."""
    digest = blake2b(f"{run_id}/{request_id}".encode(), digest_size=24).hexdigest()
    trace_id, span_id = digest[:32], digest[32:]
    if not int(trace_id, 16):
        trace_id = "0" * 31 + "1"
    if not int(span_id, 16):
        span_id = "0" * 15 + "1"
    return TraceIds(trace_id, span_id)
