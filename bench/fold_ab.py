"""The fold of one finished record on two revisions of ``src/``, side by side in one run.

    .venv/bin/python bench/fold_ab.py --before REV [--after REV] [--rounds 6] [--out PATH]

What ``ProcessRun.on_record`` and the folder greenlet do with one record (the stage's
statistics, the exporter's buckets, the time series), CPU time per record, from
``harness/costs.py``'s ``split`` with no sockets: records of 16 tokens (the per-request work
dominates) and of 128 (the per-token work does). Each revision's ``src/`` is exported as
``hot_path_ab.py`` exports it and measured in a child process with ``PYTHONPATH`` pointing at it,
alternately (before first in even rounds, after first in odd ones); a row is the median of the
rounds, each round the best of ``costs``' five repeats.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from harness import ab
from harness.stats import median
from hot_path_ab import child

HERE = Path(__file__).resolve().parent
SIZES = (16, 128)
MICRO = """
import json, sys
sys.path.insert(0, {bench!r})
from harness import costs
print(json.dumps({{str(n): round(costs.split("one", n)["fold_record"] * n, 2) for n in {sizes!r}}}))
"""


def main() -> None:
    args = ab.arguments(__doc__, rounds=6)
    seen: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    code = MICRO.format(bench=str(HERE), sizes=SIZES)
    with tempfile.TemporaryDirectory() as tmp:
        for i, name, src in ab.rounds(args, Path(tmp)):
            for size, us in child(src, ["-c", code]).items():
                seen[name].setdefault(size, []).append(us)
                print(f"round {i} {name:<6} {size:>4} tokens: {us:7.2f} µs per record", flush=True)
    rows: list[dict[str, Any]] = []
    for size in map(str, SIZES):
        before, after = round(median(seen["before"][size]), 2), round(median(seen["after"][size]), 2)
        rows.append({
            "tokens_per_record": int(size),
            "before_us_per_record": before,
            "after_us_per_record": after,
            "ratio": round(after / before, 3),
            "rounds_before": seen["before"][size],
            "rounds_after": seen["after"][size],
        })  # fmt: skip
        print(f"{size:>4} tokens: {before:.2f} -> {after:.2f} µs per record (x{after / before:.3f})")
    ab.write("fold_ab", args, rows=rows)


if __name__ == "__main__":
    main()
