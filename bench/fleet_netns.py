"""A fleet in network namespaces: how many streams a master and four workers carry on this
machine within 1 ms TTFT p50 of the simulator's truth.

    .venv/bin/python bench/fleet_netns.py [--levels 64,128,256,512] [--seconds 12] [--smoke] [--out PATH]

Needs root (network namespaces; the same ``Lab`` and ``LocustFleet`` as
``tests/e2e/test_fleet_netns.py``). The simulator (``--ttft-ms 50 --step-ms 20``, its truth log
on), the master and four workers each live in a namespace of their own, so every stream crosses
a veth pair and a bridge from its worker's own address. At each level of total streams, one
headless run (32 tokens per answer, ``--ignore-eos``), and per level:

- the client's TTFT p50 (exact, over every worker's records of the measured window) against the
  truth's p50 over the same requests: the simulator's first token write less its read of the
  request, joined to each record by ``X-Request-Id``; and the merged p50 in summary.json against
  that exact one (the merge's histograms hold every quantile within 1%);
- the added TTFT per request (the client's TTFT less the simulator's), p50 and p99: what the
  kernel's TCP path and the client's reads add;
- each process's loop lag p99 and CPU, and whether llmload called the stage client-bound.

The answer is the largest level whose client TTFT p50 is within 1 ms of the truth's, whose
merged p50 is within 1% of the exact one, and that no process called client-bound. Two cores
hold the simulator, the master and four workers here: the number is this machine's, not a
worker's capacity (``bench/capacity.py`` measures that).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import results
from harness.stats import summary_ms

sys.path.insert(0, str(results.REPO))  # the fleet harness the e2e test runs, shared
from llmload.metrics.histogram import nearest_rank
from tests.support.fleet import LocustFleet, read_jsonl
from tests.support.netns import Lab, can_use_netns

SIM, MASTER = "10.202.0.1", "10.202.0.2"
WORKERS = tuple(f"10.202.0.{11 + i}" for i in range(4))
WITHIN_MS = 1.0


def run_level(tmp: Path, users: int, seconds: int) -> dict[str, Any]:
    log = tmp / "sim-requests.jsonl"
    with Lab() as lab:
        workers = [(f"w{i}", address) for i, address in enumerate(WORKERS)]
        sim_ns, (master_ns, *spaces) = lab.star(("sim", SIM), ("master", MASTER), *workers)
        sim_args = ("--ttft-ms", "50", "--step-ms", "20", "--request-log", str(log))
        with (
            lab.sim(sim_ns, SIM, tmp / "sim.out", *sim_args) as url,
            LocustFleet(tmp, url, master_host=MASTER) as fleet,
        ):
            fleet.start_master(
                "--max-tokens",
                "32",
                "--ignore-eos",
                workers=len(WORKERS),
                users=users,
                run_time=f"{seconds}s",
                prefix=lab.exec(master_ns),
            )
            for ns in spaces:
                fleet.start_worker(prefix=lab.exec(ns))
            code = fleet.wait_master(seconds + 120)
            fleet.wait_workers(15)
            time.sleep(0.5)  # the simulator's last log lines
        summary = fleet.summary
        records = [r for rs in fleet.records().values() for r in rs]
    return judge_level(users, code, summary, records, read_jsonl(log))


def judge_level(
    users: int,
    code: int,
    summary: dict[str, Any],
    records: list[dict[str, Any]],
    logged: list[dict[str, Any]],
) -> dict[str, Any]:
    (stage,) = summary["stages"]
    truth = {e["client_request_id"]: e for e in logged if e.get("client_request_id")}
    client_ns, server_ns, added_ns = [], [], []
    for r in records:
        if r["phase"] != "measure" or r["outcome"] != "ok" or r["first_token_ns"] is None:
            continue
        sim = truth.get(r["id"])
        if sim is None or sim["first_token_ns"] is None:
            continue
        client, server = r["first_token_ns"] - r["sent_ns"], sim["first_token_ns"] - sim["arrival_ns"]
        client_ns.append(client)
        server_ns.append(server)
        added_ns.append(client - server)
    merged_p50 = float(stage["ttft_ms"]["p50"])
    client_p50, truth_p50 = _p50_ms(client_ns), _p50_ms(server_ns)
    health = stage.get("client_health") or {}
    return {
        "users": users,
        "exit_code": code,
        "requests_measured": int(stage["requests"]["ok"]) + int(stage["requests"]["failed"]),
        "requests_joined": len(added_ns),
        "merged_ttft_p50_ms": merged_p50,
        "merged_off_exact": round(merged_p50 / client_p50 - 1, 5),
        "ttft_p50_ms": round(client_p50, 3),
        "truth_ttft_p50_ms": round(truth_p50, 3),
        "ttft_p50_off_ms": round(client_p50 - truth_p50, 3),
        "added_ttft": summary_ms(added_ns),
        "client_bound": bool(stage.get("client_bound")),
        "client_health": health,
        "output_tok_per_s": stage.get("output_tok_per_s"),
    }


def _line(row: dict[str, Any], worst_lag: float) -> str:
    added = row["added_ttft"]
    return (
        f"{row['users']:5d} streams: TTFT p50 {row['ttft_p50_ms']:.3f} ms, "
        f"truth {row['truth_ttft_p50_ms']:.3f} ms (off {row['ttft_p50_off_ms']:+.3f}), "
        f"merged {row['merged_ttft_p50_ms']:.3f}; added p50 {added['p50_ms']} p99 {added['p99_ms']} ms; "
        f"{row['requests_joined']} requests; worst loop lag p99 {worst_lag} ms; "
        f"client-bound {row['client_bound']}; exit {row['exit_code']}"
    )


def _p50_ms(values_ns: list[int]) -> float:
    if not values_ns:
        return float("nan")
    ordered = sorted(values_ns)
    return ordered[nearest_rank(0.5, len(ordered)) - 1] / 1e6


def _within(row: dict[str, Any]) -> bool:
    return (
        abs(row["ttft_p50_off_ms"]) <= WITHIN_MS
        and abs(row["merged_off_exact"]) <= 0.01
        and not row["client_bound"]
        and row["requests_joined"] > 0
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--levels", default="64,128,256,512", help="total streams, comma-separated")
    parser.add_argument("--seconds", type=int, default=12, help="each level's run time")
    parser.add_argument("--smoke", action="store_true", help="one small level")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    document = results.header("fleet_netns", "fleet_netns.py", args.smoke)
    out = results.default_out("fleet_netns", args.smoke, args.out)
    refused = can_use_netns()
    if refused is not None:  # the answer is then the refusal, said and kept
        print(f"fleet_netns: not run: {refused}")
        results.write(out, document | {"refused": refused, "levels": []})
        return
    levels = [32] if args.smoke else [int(x) for x in args.levels.split(",")]
    seconds = 6 if args.smoke else args.seconds
    rows = []
    for users in levels:
        with tempfile.TemporaryDirectory(prefix="fleet-netns-") as tmp:
            row = run_level(Path(tmp), users, seconds)
        rows.append(row)
        worst_lag = max((h.get("loop_lag_p99_ms") or 0 for h in row["client_health"].values()), default=0)
        print(_line(row, worst_lag), flush=True)
    within = [r["users"] for r in rows if _within(r)]
    document |= {
        "workers": len(WORKERS),
        "seconds": seconds,
        "within_ms": WITHIN_MS,
        "max_streams_within": max(within) if within else None,
        "levels": rows,
    }
    best = document["max_streams_within"]
    print(f"largest level within {WITHIN_MS:g} ms TTFT p50 and not client-bound: {best}")
    results.write(out, document)


if __name__ == "__main__":
    main()
