"""Where a worker's CPU per event goes, without sockets: parsing to a record, folding the record.

``split`` replays one pre-rendered response (``blaster.render``, the simulator's own chunks
with continuous usage) through ``ResponseParser`` + ``ResponseRecorder`` (``deliver``: what the
worker's transport does per read) in reads of 64 KiB (``many``) or one chunk each (``one``),
then folds the record the way ``ProcessRun.on_record`` does. CPU time, best of a few repeats, in
microseconds per event.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness.blaster import render

try:  # src/ since the layers became folders
    from llmload.core.record import Phase, RequestRecord
    from llmload.core.recorder import ResponseRecorder

    try:
        from llmload.core.timeouts import Timeouts
    except ImportError:  # before the limits left the recorder
        from llmload.core.recorder import Timeouts  # type: ignore[attr-defined,no-redef]
except ImportError:  # older src/ (hot_path_ab.py measures older revisions)
    from llmload.record import Phase, RequestRecord  # type: ignore
    from llmload.recorder import ResponseRecorder, Timeouts  # type: ignore
from llmload.protocol.http1 import ResponseParser

try:  # the worker's own framing-to-sink step, where the revision has one
    from llmload.transport.delivery import deliver
except ImportError:  # older src/ (hot_path_ab.py measures older revisions)
    deliver = None  # type: ignore[assignment]


def _reads(response: bytes, per_read: str) -> list[bytes]:
    if per_read == "many":
        return [response[i : i + 65536] for i in range(0, len(response), 65536)]
    head_end = response.index(b"\r\n\r\n") + 4
    pieces, pos = [response[:head_end]], head_end
    while pos < len(response):  # one HTTP chunk (one event) per read, as a paced server sends
        eol = response.index(b"\n", pos)
        size = int(response[pos:eol].strip(), 16)
        stop = eol + 1 + size + 2
        pieces.append(response[pos:stop])
        pos = stop
    return pieces


def _record(reads: list[bytes]) -> RequestRecord:
    now = time.perf_counter_ns()
    record = RequestRecord("bench", "0", 0, Phase.MEASURE, "chat", True, now)
    recorder = ResponseRecorder(record, Timeouts())
    parser = ResponseParser("POST")
    recorder.on_sent(now)
    t = now
    for data in reads:
        t += 10_000
        if deliver is not None:
            if deliver(parser, recorder, t, data) is not None:  # ended: [DONE] or the framing
                break
            continue
        parsed = parser.feed(data)
        if parsed.head is not None:
            recorder.on_headers(t, parsed.head.status, parsed.head.headers)
        if parsed.body and recorder.on_data(t, parsed.body):
            break
    return recorder.finish(t)


def _us_per_event(work: Callable[[], object], events: int, loops: int) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        for _ in range(loops):
            work()
        best = min(best, time.process_time() - start)
    return round(1e6 * best / loops / events, 3)


def split(per_read: str, events: int | None = None) -> dict[str, float]:
    from harness.llmload_client import make_session  # imports the session only when asked

    n = events or (1000 if per_read == "many" else 128)
    reads = _reads(render(n), per_read)
    record = _record(reads)
    assert record.ok and record.output_tokens == n, (record.outcome, record.error_detail)
    loops = max(1, 20_000 // n)
    parse = _us_per_event(lambda: _record(reads), n, loops)
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session("http://127.0.0.1:9", 1, n, Path(tmp), start=False)
        window = session.stages[0].window

        # What the folder greenlet does when the loop is idle; a revision from before folding
        # was deferred (hot_path_ab.py --before) folds inside on_record.
        fold_pending = getattr(session, "fold_pending", lambda: None)

        def fold() -> None:
            session.on_record(record, session.request_started(0, window))
            fold_pending()

        folding = _us_per_event(fold, n, loops)
        session.records.close()
    return {"parse_to_record": parse, "fold_record": folding, "sum": round(parse + folding, 3)}
