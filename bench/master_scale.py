"""Scale on paper: the master's CPU per worker report, and how many workers one master can merge.

    .venv/bin/python bench/master_scale.py [--smoke] [--out PATH]

A worker's report (``llmload_delta``) is built exactly as a worker builds it: a real
``ProcessRun`` folds synthetic records (100 to 300 tokens, seeded log-normal TTFT and ITL with
jitter, so the histograms fill as many buckets as real traffic does) and ``Shipper.ship``
hands over the payload: ``StageStats``, ``TimeSeries``, exporter state and the counters. What
the master does per report is timed: Locust's ``Message.unserialize`` (msgpack with its
object hook) of the bytes a worker sends, then ``Fleet.on_delta``. Sizes: the records one
worker finishes per report interval at 100, 500 and 2,000 requests per second. The number of
workers = 0.5 core-second / (CPU per report x reports per second), at the default
``--report-interval-s 1``.

CPU time here moves by 10-30% from run to run; the instructions the same work retires do not.
So each size is also counted under callgrind (``harness/instructions.py``; ``--no-count`` skips
it): the master's instructions per report over the same payloads, after two rounds that fill
the fleet's state. That count is what compares across runs and revisions. The projection is
still the count times this core's speed on this loop (instructions per CPU-second, from the
fastest of three timed passes), so it holds only for a core like this one.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

from harness import instructions, results
from harness.llmload_client import make_session
from locust.rpc.protocol import Message

from llmload.core.record import Phase, RequestRecord, TokenSource
from llmload.run.fleet import Fleet
from llmload.run.shipping import Shipper

try:
    from llmload.run.delta import MESSAGE as DELTA
except ImportError:  # older src/: the message name lived with the shipper
    from llmload.run.shipping import DELTA  # type: ignore[attr-defined,no-redef]

INTERVAL_S = 1.0  # FleetConfig.report_interval_s default
CORE_SHARE = 0.5
WARM_ROUNDS = 2  # the first reports of a worker create its stage's state: not the steady cost


def synthetic(n: int, seed: int, now_ns: int) -> list[RequestRecord]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        sent = now_ns - rng.randrange(1_000_000_000)
        ttft = int(rng.lognormvariate(18.4, 0.6))  # ~100 ms median, a long tail
        tokens = rng.randrange(100, 301)
        stamps, t = array("q"), sent + ttft
        for _ in range(tokens):
            stamps.append(t)
            t += int(rng.lognormvariate(16.8, 0.3))  # ~20 ms median ITL with jitter
        r = RequestRecord(
            f"w-{seed}-{i}",
            str(i % 500),
            0,
            Phase.MEASURE,
            "chat",
            True,
            sent,
            prompt_tokens_requested=128,
            max_tokens=tokens,
            sent_ns=sent,
            headers_ns=sent + ttft // 2,
            first_token_ns=sent + ttft,
            first_output_ns=sent + ttft,
            last_token_ns=stamps[-1],
            done_ns=stamps[-1] + 200_000,
            status=200,
            finish_reason="length",
            output_tokens=tokens,
            prompt_tokens=134,
            token_source=TokenSource.CONTINUOUS,
            events=tokens + 2,
            reads=tokens,
            event_ns=stamps,
            event_tokens=array("l", [1] * tokens),
        )
        out.append(r)
    return out


def worker_payload(records_per_report: int, seed: int) -> bytes:
    """The bytes of one ``llmload_delta`` message after a worker folded ``records_per_report``."""
    with tempfile.TemporaryDirectory() as tmp:
        session = make_session("http://127.0.0.1:9", 500, 300, Path(tmp), start=False)
        for record in synthetic(records_per_report, seed, time.perf_counter_ns()):
            session.on_record(record)
        sent: list[dict[str, Any]] = []
        Shipper(session, lambda _kind, data: sent.append(data), users=lambda: 500).ship(final=False)
        session.records.close()
    return bytes(Message(DELTA, sent[0], f"worker-{seed}").serialize())


def master_cost(payloads: list[bytes], rounds: int) -> float:
    """CPU seconds the master spends per report, over ``rounds`` reports of each worker."""
    fleet = Fleet()
    start = time.process_time()
    _merge(fleet, payloads, range(rounds))
    return (time.process_time() - start) / (rounds * len(payloads))


def _merge(fleet: Fleet, payloads: list[bytes], rounds: range) -> None:
    for seq in rounds:
        for raw in payloads:
            message = Message.unserialize(raw)
            message.data["seq"] = seq
            fleet.on_delta(message.node_id, message.data)


def count_child(path: Path, rounds: int) -> None:
    """Under callgrind: each size's ``rounds`` reports of every worker, one counted span each."""
    marks = instructions.Marks()
    by_size: dict[int, list[bytes]] = pickle.loads(path.read_bytes())
    marks.start()
    for size, payloads in by_size.items():
        fleet = Fleet()
        _merge(fleet, payloads, range(WARM_ROUNDS))
        marks.zero()
        _merge(fleet, payloads, range(WARM_ROUNDS, WARM_ROUNDS + rounds))
        marks.dump(str(size))


def instructions_per_report(by_size: dict[int, list[bytes]], rounds: int) -> dict[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "payloads.pickle"
        path.write_bytes(pickle.dumps(by_size))
        spans = instructions.count(
            [str(Path(__file__).resolve()), "--count-child", str(path), "--rounds", str(rounds)],
            cwd=Path(__file__).resolve().parent,
        )
    return {size: spans[str(size)] / (rounds * len(payloads)) for size, payloads in by_size.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="one size, few rounds (CI)")
    parser.add_argument("--no-count", action="store_true", help="time only: no callgrind count")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--count-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count_child:
        count_child(args.count_child, args.rounds)
        return
    sizes, rounds = ((100,), 5) if args.smoke else ((100, 500, 2000), 40)
    by_size = {size: [worker_payload(size, seed) for seed in range(8)] for size in sizes}  # 8 workers
    lacking = None if args.no_count else instructions.missing()
    if lacking:
        sys.exit(f"master_scale: counting instructions needs {lacking}; or run with --no-count")
    counted = {} if args.no_count else instructions_per_report(by_size, 1 if args.smoke else 4)
    rows = []
    for size, payloads in by_size.items():
        costs = [master_cost(payloads, rounds) for _ in range(3)]
        cost = min(costs)
        workers = int(CORE_SHARE * INTERVAL_S / cost)
        row: dict[str, Any] = {
            "records_per_report": size,
            "requests_per_s_per_worker": size / INTERVAL_S,
            "payload_bytes": round(sum(map(len, payloads)) / len(payloads)),
            "master_cpu_us_per_report": round(cost * 1e6, 1),
            "master_cpu_us_per_report_spread": [round(c * 1e6, 1) for c in sorted(costs)],
            "workers_at_half_a_core": workers,
        }
        line = (
            f"{size:>5} records/report: {row['payload_bytes']:>7,} B, "
            f"{row['master_cpu_us_per_report']:>8,.1f} us of master CPU per report"
        )
        if size in counted:
            per_s = counted[size] / cost  # this core's instructions per CPU-second on this loop
            row |= {
                "master_instructions_per_report": round(counted[size]),
                "instructions_per_cpu_s": round(per_s),
            }
            line += f" ({counted[size] / 1e6:,.3f} M instructions)"
        print(f"{line} -> {workers:,} workers at {INTERVAL_S:g} s reports on half a core", flush=True)
        rows.append(row)
    doc = {
        **results.header("master_scale", "master_scale.py", args.smoke),
        "report_interval_s": INTERVAL_S,
        "core_share": CORE_SHARE,
        "rows": rows,
    }
    results.write(results.default_out("master_scale", args.smoke, args.out), doc)


if __name__ == "__main__":
    main()
