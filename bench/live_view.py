"""CPU cost of the web UI's LLM tab per poll, and of the summary's quantiles, in one run.

    .venv/bin/python bench/live_view.py [--samples 20000] [--repeats 5]

Locust's page polls ``/stats/requests`` every 2 s, and llmload answers it from the event loop
that times the requests: the running stage is summarised again each time (``summarize_stage``,
run/live.py). This fills a stage's histograms with ``--samples`` log-normal latencies per
metric (a 1%-bucket histogram of such a spread holds ~700 buckets) and prints, side by side:

- the quantiles of one latency metric taken one at a time (a walk over the sorted buckets per
  quantile, as the summary did before) and all five in one walk (``LogHistogram.quantiles``);
- one ``summarize_stage`` (what one poll costs for the running stage).

CPU time (``time.process_time``), best of ``--repeats``, so a busy machine reads the same.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from llmload.config.settings import ChecksConfig
from llmload.core.health import HealthLimits
from llmload.metrics.aggregate import StageStats
from llmload.metrics.catalog import LATENCY_KEYS
from llmload.results.build import StageView, summarize_stage
from llmload.results.from_stats import QUANTILES


def stage(samples: int) -> StageView:
    stats, rng = StageStats(), random.Random(0)
    for key in LATENCY_KEYS:
        for _ in range(samples):
            stats.hist[key].add(int(rng.lognormvariate(17, 1)))  # median ~24 ms, wide
    for key in ("tokens_per_event", "events_per_read", "output_tokens", "prompt_tokens"):
        for _ in range(samples // 10):
            stats.hist[key].add(rng.randint(1, 300))
    health = {"local": {"loop_lag_p99_ms": 0.4, "cpu_percent": 30.0}}
    return StageView(index=0, concurrency=64, stats=stats, window_s=30.0, measured=True, health=health)


def best_ms(fn: Callable[[], object], repeats: int, loops: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        for _ in range(loops):
            fn()
        best = min(best, (time.process_time() - t) / loops)
    return best * 1e3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samples", type=int, default=20_000, help="latencies per metric")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    view = stage(args.samples)
    h = view.stats.hist["ttft"]
    qs = [q for _name, q in QUANTILES]
    limits, checks = HealthLimits(), ChecksConfig()
    one_by_one = best_ms(lambda: [h.quantile(q) for q in qs], args.repeats, 50)
    one_walk = best_ms(lambda: h.quantiles(qs), args.repeats, 50)
    summary = best_ms(lambda: summarize_stage(view, limits, checks), args.repeats, 20)
    print(f"{h.bucket_count} buckets per latency metric, {args.samples:,} samples each")
    print(f"five quantiles, one walk each   {one_by_one:7.3f} ms")
    print(f"five quantiles, one walk        {one_walk:7.3f} ms   (x{one_by_one / one_walk:.1f})")
    print(f"summarize_stage (one poll)      {summary:7.3f} ms")


if __name__ == "__main__":
    main()
