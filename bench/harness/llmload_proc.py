"""llmload's client process for the benchmarks (gevent-patched first, as under Locust).

    python bench/harness/llmload_proc.py MODE URL STREAMS WARMUP_S MEASURE_S MAX_TOKENS OUT.json [STAGGER_S]

MODE ``accuracy``: every finished request with its read stamps and, from the raw body bytes
kept by the tee, the simulator's ``sent_ns`` of each token event (parsed after the run, off the
clock); ``accuracy-unrecorded`` the same with the end-of-request recording skipped (a
diagnostic: what recording costs the timing). MODE ``capacity``: events parsed, reads and the
process's CPU time over the window.
Stream ``i`` starts at ``i * STAGGER_S / STREAMS`` (0: all at once).
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402  (after patching, as Locust does)
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import msgspec  # noqa: E402
import orjson  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness.llmload_client import (  # noqa: E402
    RequestRecord,
    Worker,
    make_session,
)
from llmload.protocol.chunks import parse_chunk  # noqa: E402
from llmload.protocol.sse import DONE, SSEDecoder  # noqa: E402


def ground_truth(body: bytes) -> tuple[str | None, list[int]]:
    """The response id and the simulator's send stamp of each token-bearing event."""
    decoder = SSEDecoder()
    events = decoder.feed(body) + decoder.close()
    rid, sent = None, []
    for event in events:
        if event.data == DONE:
            continue
        if parse_chunk(event.data).token_bearing:
            obj = orjson.loads(event.data)
            rid = obj["id"]
            sent.append(obj["llmload_sim"]["sent_ns"])
    return rid, sent


def run(
    mode: str,
    url: str,
    streams: int,
    warmup_s: float,
    measure_s: float,
    *,
    max_tokens: int,
    stagger_s: float = 0.0,
) -> dict[str, Any]:
    kept: list[tuple[RequestRecord, list[bytes]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session(url, streams, max_tokens, Path(tmp))
        tee = mode.startswith("accuracy")
        worker = Worker(
            session,
            streams,
            tee=tee,
            record=mode != "accuracy-unrecorded",
            keep=(lambda r, pieces: kept.append((r, pieces))) if tee else None,
        )
        start = time.perf_counter()
        worker.start(stagger_s)
        gevent.sleep(warmup_s)
        session.health.reset()
        t0_ns, cpu0, events0, reads0 = (
            time.perf_counter_ns(),
            time.process_time(),
            worker.events_so_far(),
            worker.reads_so_far(),
        )
        gevent.sleep(measure_s)
        t1_ns, cpu1, events1, reads1 = (
            time.perf_counter_ns(),
            time.process_time(),
            worker.events_so_far(),
            worker.reads_so_far(),
        )
        health = session.health.snapshot()
        worker.stop()
        session.close()
    result: dict[str, Any] = {
        "client": "llmload",
        "window_ns": [t0_ns, t1_ns],
        "cpu_window_s": cpu1 - cpu0,
        "events": events1 - events0,
        "reads": reads1 - reads0,
        "health": msgspec.to_builtins(health),  # a dataclass in every revision
        "wall_s": time.perf_counter() - start,
    }
    if tee:
        requests = []
        for record, pieces in kept:
            rid, sent = ground_truth(b"".join(pieces))
            requests.append(
                {
                    "id": rid,
                    "ok": record.ok,
                    "st_ns": record.sent_ns,
                    "ttft_ns": (record.first_token_ns or 0) - (record.sent_ns or 0),
                    "read_ns": record.event_ns.tolist(),
                    "sent_ns": sent,
                }
            )
        result["requests"] = requests
    return result


def main() -> None:
    mode, url, streams, warmup, measure, max_tokens, out = sys.argv[1:8]
    stagger = float(sys.argv[8]) if len(sys.argv) > 8 else 0.0
    result = run(
        mode, url, int(streams), float(warmup), float(measure), max_tokens=int(max_tokens), stagger_s=stagger
    )
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
