"""A bounded sample of a run's requests, for the report's request timeline and requests table.

Read from the ``requests*.jsonl`` files the summary lists (one per process). Every failed or
unfinished request is kept first, up to the bound, because those are what a reader looks for;
the rest of the bound is an even sample of the others, evenly spaced in the files' order so
the same run always gives the same page. Aggregates never come from here: the page's numbers are the
summary's, and this sample only shows what single requests did.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from llmload.protocol.jsonvalue import JSON
from llmload.results.summary import Summary

LIMIT = 3_000  # requests on the page: about 0.4 MB of JSON; a timeline this dense is still legible
_S = 1e9
_MS = 1e6
_TEXT = 160  # characters of an error message kept per request


@dataclass(frozen=True, slots=True)
class RequestSample:
    """Columns of the sampled requests, sorted by start; times in s since the run's first start."""

    total: int  # requests in the files, warm-up included
    start_s: tuple[float, ...]  # handed to the client (scheduled, else began)
    sent_s: tuple[float | None, ...]
    first_s: tuple[float | None, ...]  # first token
    end_s: tuple[float, ...]
    stage: tuple[int | None, ...]
    phase: tuple[str, ...]
    name: tuple[str, ...]
    outcome: tuple[str, ...]
    status: tuple[int | None, ...]
    ttft_ms: tuple[float | None, ...]
    e2e_ms: tuple[float | None, ...]
    output_tokens: tuple[int | None, ...]
    error: tuple[str, ...]
    id: tuple[str, ...]


def _lines(run_dir: Path, summary: Summary) -> Iterator[dict[str, JSON]]:
    names = [str(r.get("records_file")) for r in summary.run.records if r.get("records_file")]
    for name in names or ["requests.jsonl"]:
        path = run_dir / name
        if not path.is_file():
            continue
        with path.open("rb") as f:
            for line in f:
                if line.strip():
                    try:
                        yield orjson.loads(line)
                    except orjson.JSONDecodeError:
                        continue  # a killed process's last line, cut short


def _ns(record: Mapping[str, JSON], key: str) -> int | None:
    value = record.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _start(record: Mapping[str, JSON]) -> int | None:
    return _ns(record, "scheduled_ns") or _ns(record, "began_ns")


def sample_requests(run_dir: Path, summary: Summary, limit: int = LIMIT) -> RequestSample | None:
    """Up to ``limit`` requests, failures first; None when the run recorded none."""
    failed: list[dict[str, JSON]] = []
    ok: list[dict[str, JSON]] = []
    for record in _lines(run_dir, summary):
        if _start(record) is None or _ns(record, "done_ns") is None:
            continue
        (ok if record.get("outcome") == "ok" else failed).append(record)
    total = len(failed) + len(ok)
    if total == 0:
        return None
    kept = failed[:limit]
    room = limit - len(kept)
    if room >= len(ok):
        kept += ok
    elif room > 0:
        kept += [ok[k * len(ok) // room] for k in range(room)]
    kept.sort(key=lambda r: _start(r) or 0)
    t0 = min(_start(r) or 0 for r in failed + ok)

    def s(record: Mapping[str, JSON], key: str) -> float | None:
        ns = _ns(record, key)
        return None if ns is None else round((ns - t0) / _S, 6)

    def ms(a: int | None, b: int | None) -> float | None:
        return None if a is None or b is None else round((b - a) / _MS, 3)

    return RequestSample(
        total=total,
        start_s=tuple(round(((_start(r) or t0) - t0) / _S, 6) for r in kept),
        sent_s=tuple(s(r, "sent_ns") for r in kept),
        first_s=tuple(s(r, "first_token_ns") for r in kept),
        end_s=tuple(s(r, "done_ns") or 0.0 for r in kept),
        stage=tuple(_int(r.get("stage")) for r in kept),
        phase=tuple(str(r.get("phase") or "") for r in kept),
        name=tuple(str(r.get("name") or r.get("endpoint") or "") for r in kept),
        outcome=tuple(str(r.get("outcome") or "") for r in kept),
        status=tuple(_int(r.get("status")) for r in kept),
        ttft_ms=tuple(ms(_start_sent(r), _ns(r, "first_token_ns")) for r in kept),
        e2e_ms=tuple(ms(_start_sent(r), _ns(r, "done_ns")) for r in kept),
        output_tokens=tuple(_int(r.get("output_tokens")) for r in kept),
        error=tuple(_error(r) for r in kept),
        id=tuple(str(r.get("id") or "") for r in kept),
    )


def _start_sent(record: Mapping[str, JSON]) -> int | None:
    # TTFT and E2E are measured from the send (docs/metrics.md), not from the schedule
    return _ns(record, "sent_ns") or _ns(record, "began_ns")


def _int(value: JSON) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _error(record: Mapping[str, JSON]) -> str:
    error = record.get("error")
    if error is None:
        return ""
    text = error if isinstance(error, str) else orjson.dumps(error).decode()
    return text[:_TEXT]


def columns_of(sample: RequestSample) -> Sequence[str]:
    return [f for f in sample.__slots__ if f != "total"]
