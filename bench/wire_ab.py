"""A worker's delta to the master on two revisions of ``src/``, side by side in one run.

    .venv/bin/python bench/wire_ab.py --before REV [--after REV] [--rounds 6] [--out PATH]

The message a worker ships every report interval (``run/delta.py``): its bytes as Locust's
msgpack sends them, the worker's CPU to encode and pack it, and the master's to unpack and read
it back, in µs (best of five repeats a round; a row is the median of the rounds). Two deltas:
``idle``, a stage with nothing new (what an idle worker ships), and ``busy``, a stage that
folded 400 records of 64 tokens under three scenario names (``by_name``), with its exporter
buckets and time series. Revisions run in turn as in ``fold_ab.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harness import ab
from harness.stats import median
from hot_path_ab import child

HERE = Path(__file__).resolve().parent
CASES = ("idle", "busy")
MEASURES = ("bytes", "encode_us", "decode_us")
MICRO = """
import json, sys, time
sys.path.insert(0, {bench!r})
import msgpack
from harness import costs
from harness.blaster import render
from llmload.core.phases import Window
from llmload.metrics.aggregate import StageStats
from llmload.metrics.classic import ClassicStats
from llmload.metrics.timeseries import TimeSeries
from llmload.run.delta import Delta
try:
    from llmload.metrics.wire import decode, encode
    to_wire, from_wire = encode, lambda data: decode(Delta, data)
except ImportError:  # before the wire form was declared
    to_wire, from_wire = Delta.to_wire, Delta.from_wire

def delta(records):
    stats, classic, series, window = StageStats(), ClassicStats(), TimeSeries(), Window(t0_ns=0)
    for r in records:
        stats.add(r, window)
        classic.add(r)
        series.add(r, 0, None)
    return Delta(seq=1, name="w", records_file="w.jsonl", stages={{0: stats}}, classic={{0: classic}},
                 timeseries=series)

def best(work, loops=200):
    times = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(loops):
            work()
        times.append(time.process_time() - start)
    return round(1e6 * min(times) / loops, 2)

reads = costs._reads(render(64), "one")
busy = []
for i in range(400):
    r = costs._record(reads)
    r.name = ("plan", "act", "check")[i % 3]
    busy.append(r)
out = {{}}
for case, records in (("idle", []), ("busy", busy)):
    d = delta(records)
    packed = msgpack.packb(to_wire(d), use_bin_type=True)
    back = from_wire(msgpack.unpackb(packed, raw=False, strict_map_key=False))
    assert back.stages[0].counts == d.stages[0].counts
    out[case] = {{
        "bytes": len(packed),
        "encode_us": best(lambda: msgpack.packb(to_wire(d), use_bin_type=True)),
        "decode_us": best(lambda: from_wire(msgpack.unpackb(packed, raw=False, strict_map_key=False))),
    }}
print(json.dumps(out))
"""


def main() -> None:
    args = ab.arguments(__doc__, rounds=6)
    seen: dict[str, dict[str, dict[str, list[float]]]] = {"before": {}, "after": {}}
    code = MICRO.format(bench=str(HERE))
    with tempfile.TemporaryDirectory() as tmp:
        for i, name, src in ab.rounds(args, Path(tmp)):
            for case, values in child(src, ["-c", code]).items():
                for measure, value in values.items():
                    seen[name].setdefault(case, {}).setdefault(measure, []).append(value)
                print(f"round {i} {name:<6} {case:<4} {values}", flush=True)
    rows: list[dict[str, Any]] = []
    for case in CASES:
        row: dict[str, Any] = {"delta": case}
        for measure in MEASURES:
            before = median(seen["before"][case][measure])
            after = median(seen["after"][case][measure])
            row[measure] = {"before": before, "after": after, "ratio": round(after / before, 3)}
            print(f"{case:<4} {measure:<9}: {before:10.2f} -> {after:10.2f} (x{after / before:.3f})")
        rows.append(row)
    ab.write("wire_ab", args, rows=rows)


if __name__ == "__main__":
    main()
