"""Markdown tables from the result documents: used by ``report.py`` and printed by ``run_all.py``."""

from __future__ import annotations

from typing import Any

CLIENT_NAMES = {
    "llmload": "llmload",
    "vllm-style": "vLLM-style (aiohttp)",
    "locust-lines": "Locust FastHttpUser lines",
    "llmload-unrecorded": "llmload, end-of-request recording skipped",
}


def provenance(doc: dict[str, Any]) -> str:
    pins = doc.get("pinned_cpus")
    pinned = f", server on CPU {pins[0]} and client on CPU {pins[-1]}" if pins and len(pins) > 1 else ""
    return (
        f"`{doc['command']}` · revision `{doc['git_revision'][:10]}` · {doc['cores']} cores"
        f"{pinned} · Python {doc['python']} · {doc['timestamp']} · load average "
        f"{doc['load_average_1m']}{' · SMOKE' if doc.get('smoke') else ''}"
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _bytes(value: int | None) -> str:
    return "-" if value is None else f"{value:,} B"


def accuracy_table(doc: dict[str, Any]) -> list[str]:
    """The side-by-side table: one row per level, TTFT error p50 and ITL error p99 per client."""
    names = [n for n in CLIENT_NAMES if any(n in lv["clients"] for lv in doc["levels"])]
    head = "| streams x step (events/s) | start |" + "".join(
        f" {CLIENT_NAMES[n]}: TTFT err p50 / mean · ITL err p99 · CPU |" for n in names
    )
    lines = [head, "|---|---|" + "---|" * len(names)]
    for lv in doc["levels"]:
        cells = []
        for n in names:
            c = lv["clients"].get(n)
            if c is None:
                cells.append(" - |")
                continue
            m = c["median"]
            cells.append(
                f" {_ms(m['ttft_error_p50_ms'])} / {_ms(m['ttft_error_mean_ms'])} ms · "
                f"{_ms(m['itl_error_p99_ms'])} ms · {m['cpu_share']:.0%} |"
            )
        lines.append(
            f"| {lv['streams']} x {lv['step_ms']} ms ({lv['events_per_s']:,}) | {lv['start']} |"
            + "".join(cells)
        )
    return lines


def verdict_table(doc: dict[str, Any]) -> list[str]:
    lines = [
        "| streams | start | llmload TTFT err p50 ≤ 5 ms | llmload ÷ vLLM-style TTFT err p50 "
        "(goal ≤ 1/3 at 100+) | ITL err p99 no worse than vLLM-style | llmload CPU ≤ 50% |",
        "|---|---|---|---|---|---|",
    ]

    def yes(v: bool | None) -> str:
        return "-" if v is None else ("yes" if v else "**no**")

    for v in doc["verdicts"]:
        lines.append(
            f"| {v['streams']} | {v['start']} | {yes(v['ttft_p50_le_5ms'])} | "
            f"{_ms(v['ttft_ratio_to_vllm'])} ({yes(v['ttft_third_of_vllm'])}) | "
            f"{yes(v['itl_p99_not_worse'])} | {yes(v['cpu_le_50pct'])} |"
        )
    return lines


def capacity_table(doc: dict[str, Any]) -> list[str]:
    lines = [
        "| regime | events per CPU-second (median) | goal | events/s it took, its CPU |"
        " events per read | CPU per event | parse to record / fold record (no sockets) |"
        " gevent floor: wait-first / naive (recv only) | llmload ÷ floor | runs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["regimes"]:
        split = r["cost_split_us_per_event"]
        rate = r["median_events_per_cpu_s"]
        runs = ", ".join(f"{x['events_per_cpu_s']:,}" for x in r["runs"])
        goal = "-" if r["goal"] is None else f"{r['goal']:,} ({'met' if r['meets_goal'] else '**not met**'})"
        lines.append(
            f"| {r['regime'].replace('_', ' ')} | **{rate:,.0f}** | {goal} | "
            f"{r['median_events_per_s']:,.0f}, {r['median_cpu_share']:.0%} | "
            f"{r['median_events_per_read']} | {1e6 / rate:.2f} µs | "
            f"{split['parse_to_record']} / {split['fold_record']} µs | "
            f"{r['median_floor_cpu_us_per_event']} / "
            f"{r['median_naive_floor_cpu_us_per_event']} µs | "
            f"{r['median_ratio_to_floor']} | {runs} |"
        )
    return lines


def memory_table(doc: dict[str, Any]) -> list[str]:
    ps, sl = doc["per_stream"], doc["slope"]
    return [
        "| measure | value | goal |",
        "|---|---|---|",
        f"| RSS per in-flight stream at {ps['streams']:,} streams | "
        f"{ps['rss_run']['rss_bytes_per_stream']:,} B"
        f" ({ps['rss_run']['token_events_per_stream']} token events each) | ≤ 20,000 B |",
        f"| tracemalloc per in-flight stream | {_bytes(ps['tracemalloc_run']['traced_bytes_per_stream'])}"
        " | ≤ 20,000 B |",
        f"| of which per-event arrays (16 B per token event) | "
        f"{ps['rss_run']['array_bytes_per_stream']:,} B | |",
        f"| floor: a bare gevent greenlet blocked in `recv`, RSS | "
        f"{ps['gevent_floor']['rss_bytes_per_blocked_greenlet']:,} B | |",
        f"| RSS slope, {sl['streams']} streams, {sl['seconds']:.0f} s, {sl['records_written']:,} requests | "
        f"{sl['slope_mb_per_min']:+.3f} ± {sl['slope_stderr_mb_per_min']:.3f} MB/min (RSS "
        f"{sl['rss_start_mb']} → {sl['rss_end_mb']} MB) | < 1 MB/min |",
    ]


def master_table(doc: dict[str, Any]) -> list[str]:
    counted = all("master_instructions_per_report" in r for r in doc["rows"])
    lines = [
        "| requests per second per worker | report size | master CPU per report | "
        + ("instructions per report | " if counted else "")
        + f"workers per master at {doc['report_interval_s']:g} s reports, ≤ 50% of a core |",
        "|---|---|---|---|" + ("---|" if counted else ""),
    ]
    for r in doc["rows"]:
        instructions = f"{r['master_instructions_per_report'] / 1e6:,.2f} M | " if counted else ""
        lines.append(
            f"| {r['requests_per_s_per_worker']:,.0f} | {r['payload_bytes']:,} B | "
            f"{r['master_cpu_us_per_report']:,.0f} µs | {instructions}**{r['workers_at_half_a_core']:,}** |"
        )
    return lines


def fleet_table(doc: dict[str, Any]) -> list[str]:
    if doc.get("refused"):
        return [f"not run: {doc['refused']}"]
    lines = [
        f"| streams over {doc['workers']} workers | client TTFT p50 | truth p50 | off | merged p50 | "
        "added TTFT p50 / p99 | client-bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in doc["levels"]:
        added = r["added_ttft"]
        lines.append(
            f"| {r['users']:,} | {r['ttft_p50_ms']:.3f} ms | {r['truth_ttft_p50_ms']:.3f} ms | "
            f"{r['ttft_p50_off_ms']:+.3f} ms | {r['merged_ttft_p50_ms']:.2f} ms | "
            f"{added['p50_ms']} / {added['p99_ms']} ms | {'yes' if r['client_bound'] else 'no'} |"
        )
    lines.append(
        f"\nThe most streams within {doc['within_ms']:g} ms of the truth's TTFT p50, not client-bound: "
        f"**{doc['max_streams_within']}**"
    )
    return lines


# vLLM bench serve on a 2-core machine (docs/pitfalls.md): mean added TTFT, mock TTFT 50 ms, 10 ms ITL.
FIELD_NOTES_VLLM_MS = {1: 6.8, 10: 6.1, 100: 22.9, 500: 141.8}


def reproduction_table(doc: dict[str, Any]) -> list[str]:
    """The vLLM-style client against the vLLM numbers of docs/pitfalls.md, at the study's own levels (10 ms
    steps; all streams at once where the level was run that way): within ±50% or not."""
    lines = [
        "| streams (10 ms step) | start | pitfalls.md: vllm bench serve, mean added TTFT | "
        "vLLM-style here: mean added TTFT (vs the 50 ms set) | ratio | within ±50% |",
        "|---|---|---|---|---|---|",
    ]
    best: dict[int, dict[str, Any]] = {}
    for lv in doc["levels"]:
        c = lv["clients"].get("vllm-style")
        if c is None or lv["step_ms"] != 10 or lv["streams"] not in FIELD_NOTES_VLLM_MS:
            continue
        if lv["streams"] not in best or lv["start"] == "lockstep":  # the study's own protocol
            best[lv["streams"]] = {"start": lv["start"], "median": c["median"]}
    for streams, row in sorted(best.items()):
        ours = row["median"]["ttft_error_vs_nominal_mean_ms"]
        ref = FIELD_NOTES_VLLM_MS[streams]
        ratio = ours / ref if ours is not None else None
        within = ratio is not None and 0.5 <= ratio <= 1.5
        lines.append(
            f"| {streams} | {row['start']} | +{ref} ms | {_ms(ours)} ms | "
            f"{_ms(ratio)} | {'yes' if within else '**no**'} |"
        )
    return lines


def tuning_table(doc: dict[str, Any]) -> list[str]:
    labels = {
        "frame_many": "framing, 64 KiB reads (µs/event)",
        "frame_one": "framing, one event per read",
        "record_many": "framing + SSE + parse + record, 64 KiB reads",
        "record_one": "framing + SSE + parse + record, one event per read",
        "worker_many_per_read": "worker on sockets, many per read (events/CPU-s)",
        "worker_one_per_read": "worker on sockets, one per read (events/CPU-s)",
    }
    lines = ["| measure | before | after | after / before |", "|---|---|---|---|"]
    for r in doc["rows"]:
        fmt = "{:,.0f}" if r["unit"] == "events_per_cpu_s" else "{:.3f}"
        lines.append(
            f"| {labels.get(r['what'], r['what'])} | {fmt.format(r['before'])} | "
            f"{fmt.format(r['after'])} | {r['ratio']:.2f} |"
        )
    return lines


def client_bound_table(doc: dict[str, Any]) -> list[str]:
    lines = [
        "| level | streams | contention | timing error p50 / p99 | loop lag p99 | CPU | "
        "simulator lateness p99 | flagged | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        if r["client_realtime"]:
            what = "none, client at SCHED_FIFO"
        elif r["quota_percent"]:
            what = f"cgroup limit {r['quota_percent']}% of a core"
        elif r["burners"]:
            what = f"{r['burners']} busy loop{'s' if r['burners'] > 1 else ''}" + (
                " at nice 19" if r["level"].endswith("n") else ""
            )
        else:
            what = "none" if r["level"] == "0" else "none: overload by load"
        lines.append(
            f"| {r['level']} | {r['streams']:,} | {what} | {_ms(r['error_p50_ms'])} / "
            f"{_ms(r['error_p99_ms'])} ms | {_ms(r['loop_lag_p99_ms'])} ms | "
            f"{r['cpu_percent']}% | {_ms(r['sim_lateness_p99_ms'])} ms | "
            f"{'yes' if r['client_bound'] else 'no'} | {r['verdict']} |"
        )
    return lines
