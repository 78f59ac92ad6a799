"""The W3C trace context of a request: valid, stable for its ids, unique across requests and runs."""

from __future__ import annotations

import re

from llmload.core.tracecontext import trace_ids

TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-01")


def test_a_requests_traceparent_is_valid_and_follows_from_its_ids() -> None:
    ids = trace_ids("run-a", "local-0-0")
    match = TRACEPARENT.fullmatch(ids.traceparent)
    assert match is not None and match.groups() == (ids.trace_id, ids.span_id)
    assert int(ids.trace_id, 16) and int(ids.span_id, 16)  # all zeros is invalid in W3C
    assert trace_ids("run-a", "local-0-0") == ids  # the record's trace id finds the request again


def test_requests_and_runs_do_not_share_traces() -> None:
    ids = {
        trace_ids(run, f"local-{user}-{i}").trace_id
        for run in ("a", "b")
        for user in range(20)
        for i in range(50)
    }
    assert len(ids) == 2 * 20 * 50
