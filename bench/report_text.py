"""What the measurements mean: the findings under each generated section of docs/performance.md.

Kept apart from ``report.py`` (which only renders) because it is prose about one set of results:
rerunning the benchmarks regenerates every number in the tables, and whoever commits new
results re-reads these paragraphs against them.
"""

from __future__ import annotations

FINDINGS = {
    "capacity": """
**Many events per read: about 280,000 events per CPU-second, short of 300,000.** The split
says why. Framing, SSE, JSON and the record cost 2.4 µs per event; folding the finished record
costs 0.8 µs (`StageStats` with its latency histograms, `TimeSeries`, the exporter's
`ClassicStats`, the `requests.jsonl` line: `metrics/`, `export/` and `locust/session.py`, which
this work did not own); sockets and per-request work are the remaining ~0.35 µs. The parse
path alone runs at about 360,000 events per CPU-second. One `orjson.loads` of a 260-byte chunk
with continuous usage is 0.9 µs of it, the floor for a client that reads every field the
metrics need. What would close the gap is in the folding: `tokens_per_event` is one histogram
`add` per event (run-length `add_many` would make it one per run of equal counts), and
`TimeSeries.add` converts every stamp to a wall-clock second (a bisect per read would do).

**One event per read: about 39,000 events per CPU-second, short of 50,000, and the event loop
is most of it.** The `gevent floor` column is a bare gevent client on the same 500 streams that
only `recv`s and counts: 15 µs per event on this machine (one wake-up, greenlet switch and
`recv` per event). That leaves 5 µs per event for 50,000; llmload spends 4.3 µs parsing to the
record (per-read overhead dominates with one event per read), 2.9 µs folding (histograms per
read: ITL, chunk gap, events per read, tokens per event, twice with the exporter's) and about
3 µs of per-request work spread over 128 events (request body, record, Locust event, JSON
line). With the simulator on the client's CPU instead (it runs at SCHED_FIFO, so the client
reads only when it yields), reads batch ~10 events and the same worker measured ~70,000 events
per CPU-second: pinning apart is the honest, and slower, regime. FIELD-NOTES measured ~17 µs per
event for hand-written framing on gevent sockets alone: 50,000 with full recording is not
reachable on gevent here without moving folding off the per-request path.
""",
    "tuning": """
Before is `src/` at 2ec3641 (the parent of the tuning commit 4bab018), after is the commit
measured. The changes, all on the hot path:

- `protocol/http1.py`: a chunk-size line already seen in the response is a dict hit instead of
  a parse (`_chunk_size` slices, strips, validates and converts; events repeat a few sizes); the
  per-read `Parsed` is built with `tuple.__new__`. Framing 0.82 → 0.45 µs per event in 64 KiB
  reads.
- `protocol/sse.py`: `SSEDecoder.feed_data` returns the events' data without building an
  `SSEEvent` per event (the recorder never reads event types); `feed` is unchanged.
- `protocol/chunks.py`: `chunk_fields` parses to a plain tuple in one call (`parse_chunk` and
  `parse_response` wrap it): one Python call per event instead of two, and an exact tuple unpacks
  in one instruction where a NamedTuple goes through its iterator.
- `recorder.py`: the per-event `_on_chunk` call is folded into one loop per read with locals;
  what is the same for every event of a read (its stamp: first/last token, first output; event
  count, finish reason, prompt tokens, usage state) is written once after the loop.
- `transport/lean.py` (+ `lean_io.py`, the socket helpers split off to keep both under 250
  lines): one `gevent.Timeout` per response instead of gevent building one for every blocking
  read of a socket with a timeout (measured 1.7 µs per blocking read); the timer re-arms from the
  sink's deadline when it fires, so stall and first-token deadlines keep their meaning. IP
  literals connect without gevent's resolver threads (a 1,000-user ramp queued on its ten
  threads), and neither the last read nor the rendered request is held while a response
  streams.
- `client.py`: the request body is an exact copy of what orjson returns (an 8 KiB buffer for a
  1 KiB body, held for the whole request): 7 KB less per in-flight stream.
- `record.py`: `spread_tokens` moved from the recorder (unchanged).

Every unit and integration test passes unchanged; `tests/bench/test_hot_path.py` adds property
tests that any split of a stream with repeated chunk sizes frames the same body as one byte per
feed, and that `feed_data` is the data of `feed`.
""",
    "accuracy": """
Two ways to start the load, both run for every client. **Staggered** (the steady state): stream
`i` starts at `i/N` of one request's duration, as a Locust spawn rate would spread them.
**Lockstep** (vLLM's study: `--request-rate inf`): every stream starts at once and, with fixed
lengths, all of them finish and restart together for ever, so the client meets bursts of N
completions and N new requests every cycle.

**TTFT.** llmload's added TTFT error p50 is under 0.6 ms at every staggered level, 3 to 7 times
below the vLLM-style client's (1.0 to 1.8 ms), and a third or less of it at 100 and 500 streams.
In lockstep at 100 streams it is 0.12 ms against 19 ms. In lockstep at 500 streams (50 ms
steps) it is 11 ms, a ninth of the vLLM-style client's 119 ms but over the 5 ms goal: 500
requests end within milliseconds of each other, each costs the loop about 0.5 ms at its end
(folding its record, then building and sending the next request), and the new requests' first
tokens wait behind that quarter-second wave. That is the lockstep artefact FIELD-NOTES warns
about; spread over a cycle, the same load gives 0.58 ms.

**ITL.** llmload's ITL error p99 is lower than the vLLM-style client's at 1 and 500 staggered
streams and 100 lockstep ones, and higher at 10 and 100 staggered (1.6 to 1.8 ms against 0.6 to
1.2 ms) and 500 lockstep (49 against 33 ms). At 500 lockstep it is the same wave as for TTFT:
500 ends of requests, each folding its record (about 0.4 ms for 100 tokens: the
`requests.jsonl` line, `StageStats`, the exporter's `ClassicStats`, `TimeSeries`) and sending
the next, hold the loop while other streams' events wait. The vLLM-style client does nothing at
a request's end: it keeps every timestamp in Python lists and computes its metrics after the run
(unbounded memory, nothing live). At 10 and 100 staggered streams the cause is not established:
the diagnostic below (llmload with that end-of-request recording skipped, run later on a busier
machine) moves the p99 from 3.9 to 3.1 ms, a part of the gap; tails of 1 to 4 ms vary two- to
threefold between repeats of one client here (FIELD-NOTES puts this machine's own scheduling
noise at 4 to 7 ms p99), and a run with Python's garbage collector disabled was inconclusive.
Folding records in a greenlet that yields between them, or per read as events arrive, would
remove the part that is llmload's.

**CPU.** At 10,000 events/s llmload used 30 to 45% of its core where the vLLM-style client used
55 to 72%.

**Locust's `FastHttpUser` with `iter_lines`** is off by about two steps whatever the load: +30 ms
TTFT at 10 ms steps, +150 ms at 50 ms, ITL error p99 four steps. Its `iter_content(1024)` waits
for 1 KiB (about three events), so the first token is seen with the third event and ITL
alternates between 0 and three steps (FIELD-NOTES: line readers that batch tokens).

**The reference against FIELD-NOTES.** `pip install vllm` cannot be used here: `pip download
--no-deps vllm` fetched vllm 0.33.0 (336 MB) whose `Requires-Dist` include `torch==2.14.0`,
`torchaudio`, `torchvision`, `flashinfer-python`, `nvidia-cudnn-frontend`,
`nvidia-cutlass-dsl[cu13]` and more CUDA wheels: several GB of CUDA torch for a CPU-only client.
The vLLM-style client ports its benchmark client from that wheel instead. At the study's own
levels in lockstep (10 ms steps) its mean added TTFT is within ±50% of FIELD-NOTES' `vllm bench
serve` numbers at 100 and 500 streams, and it reports 500 streams at 50,000 events/s with 81% of
its core and a 163 ms TTFT error p50. At 1 and 10 streams FIELD-NOTES' +6 to +7 ms are most likely
the mock server's own lateness (a Python asyncio mock); this simulator's (timerfd deadlines,
SCHED_FIFO) is under 0.1 ms, so the client's own share, 1.2 to 1.6 ms, is what remains.
""",
    "memory": """
**Per in-flight stream: 20.0 KB of RSS at 1,000 streams, at the 20 KB goal (29 bytes over, in
this run); 13.5 KB of Python allocations.** Of the RSS, 9.4 KB is what any gevent client pays
for a greenlet blocked in `recv` (the floor row), and 1.8 KB is the record's two per-event
arrays after ~110 token events (16 B per event: `array('q')` stamps and `array('l')` token
counts, no Python object per event). The rest is the stream's objects: socket, transport,
parser, SSE decoder, recorder, record, request body and prompt, and the user's frames. Before
the tuning (see Hot-path tuning) the same stream held three more things: orjson's 8 KiB buffer
under a 1 KiB request body, the last read and its de-chunked copy (up to 2 x 64 KiB each when
the client reads late) and, during a ramp, ~3 KB per user queued on gevent's resolver threads.
A smoke run of this benchmark then read 28.5 KB of RSS per stream (31 events each), and
tracemalloc 20.7 KB, 8 KB of it at the line returning the orjson body. The number grows by 16 B per event
received, so a stream 2,000 tokens long costs about 30 KB.

**RSS slope: +0.14 MB/min over 10 minutes**, 57,000 requests at ~96 requests/s, a
standard error of 0.002 MB/min: under the 1 MB/min goal. What grows is by design: a run's
per-second series (`TimeSeries`: token counts and a TTFT histogram per wall-clock second, kept
for `timeseries.csv`; a distributed worker ships and drops it every report) and Locust's own
per-second request counts. Records go to `requests.jsonl`, not memory. The smoke mode measures
20 seconds, where allocator warm-up dominates the slope (it reads several MB/min there); the
10-minute run is the command above with `--slope-s 600`.
""",
    "master": """
A worker's report holds bounded histograms, not samples, so it grows with the buckets traffic
fills (5 to 8 KB here), not with requests. The master's cost per report is Locust's
`Message.unserialize` (msgpack with Locust's object hook: a Python call per map) and
`Fleet.on_delta` (`StageStats.from_dict` and merge, the exporter's `ClassicStats`, `TimeSeries`):
0.3 to 0.8 ms. **At the default 1 s report interval one master merges about 650 workers doing
2,000 requests/s each, and about 1,800 doing 100/s, on half a core.** Not included: Locust's
own per-worker traffic (a heartbeat a second, its stats every 3 s) and ZeroMQ's I/O threads,
both small beside this; and summaries or exports, which run once per stage, not per report.
""",
}
