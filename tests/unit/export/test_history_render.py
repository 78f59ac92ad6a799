"""``llmload history``'s tables, from records of the hand-made runs (tests/fixtures/results)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from llmload.export.history_render import levels_of, runs_table, trend_table
from llmload.export.rundata import read_summary
from llmload.results.runrecord import RunRecord, record_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"


def records(**labels: str) -> list[RunRecord]:
    """engine-c, engine-b, engine-a, newest first as the store gives them, a minute apart."""
    out = []
    for minute, name in enumerate(("engine-a", "engine-b", "engine-c")):
        record = record_of(read_summary(FIXTURES / name), f"/results/{name}", labels)
        out.append(replace(record, started_s=(record.started_s or 0.0) + 60 * minute))
    return out[::-1]


def test_the_runs_are_grouped_by_key_newest_group_first() -> None:
    runs = records()
    apart = replace(runs[0], run_id="other-hardware", key=replace(runs[0].key, hardware="a100"))
    text = runs_table([apart, *runs], "/tmp/h.sqlite")
    lines = text.splitlines()
    assert lines[0] == "llmload history: 4 run(s) of 2 key(s) in /tmp/h.sqlite"
    groups = [line for line in lines if line.startswith("key ")]
    assert groups == [
        f"key {apart.key.hash}: {apart.key.describe()}",
        f"key {runs[0].key.hash}: {runs[0].key.describe()}",
    ]
    body = text.split(groups[1])[1]
    order = [name for name in ("cccc", "bbbb", "aaaa") if name in body]
    assert order == ["cccc", "bbbb", "aaaa"] and body.index("cccc") < body.index("bbbb") < body.index("aaaa")
    assert "2,370.0 @128" in body and "sglang 0.5.3" in body and "vllm 0.11.0" in body


def test_an_empty_store_says_so() -> None:
    assert runs_table([], "/x") == "llmload history: no runs recorded in /x yet"


def test_a_trend_at_one_level_is_oldest_first_with_its_repeats_and_the_change() -> None:
    runs = records(image="x")
    text = trend_table(runs, "output_tok_per_s", "1")
    rows = [line for line in text.splitlines() if line.startswith("2025")]
    assert [row.split()[0] for row in rows] == [
        "20250601-100000-aaaa",
        "20250601-110000-bbbb",
        "20250601-120000-cccc",
    ]
    # engine-a ran C=1 twice (82.2 and 82.8): their mean, their span, two repeats
    assert rows[0].split()[-3:] == ["82.50", "82.20-82.80", "2"]
    assert rows[1].split()[-4:] == ["27.00", "26.80-27.20", "2", f"{(27.0 / 82.5 - 1) * 100:+.1f}%"]


def test_a_trend_over_every_level_and_of_the_runs_own_figures() -> None:
    runs = records()
    assert levels_of(runs) == ["1", "8", "32", "128"]
    by_level = trend_table(runs, "ttft_p99_ms", None).splitlines()
    assert by_level[3].split()[-5:] == ["1", "8", "32", "128", "note"]
    headline = trend_table(runs, "peak_tok_per_s", None)
    assert "1,536.0" in headline and "+44.3%" in headline  # 1536 -> 2216


def stepped(count: int, step_at: int) -> list[RunRecord]:
    """``count`` runs of engine-a a minute apart, newest first; from run ``step_at`` on, C=1 is
    5% faster and the engine a version newer (1% noise, seeded)."""
    rng = random.Random(39)
    base = records()[-1]
    out = []
    for n in range(count):
        after = n >= step_at
        tok_s = 80.0 * (1.05 if after else 1.0) * (1 + rng.gauss(0, 0.01))
        stages = tuple(replace(s, output_tok_per_s=tok_s) if s.level == "1" else s for s in base.stages)
        server = replace(base.server, version="0.11.1" if after else "0.11.0")
        out.append(replace(base, run_id=f"run-{n:02d}", started_s=1e9 + 60 * n, stages=stages, server=server))
    return out[::-1]


def test_the_change_point_is_noted_at_the_run_after_the_change() -> None:
    runs = stepped(12, 6)
    lines = trend_table(runs, "output_tok_per_s", "1").splitlines()
    rows = {line.split()[0]: line for line in lines if line.startswith("run-")}
    marked = [run for run, line in rows.items() if "change point" in line]
    assert marked == ["run-06"]
    assert "(p=0.005): vllm 0.11.0 → 0.11.1" in rows["run-06"]
    by_level = trend_table(runs, "output_tok_per_s", None)
    assert [line.split()[0] for line in by_level.splitlines() if "change point at 1 +" in line] == ["run-06"]
    assert "change point" not in trend_table(runs, "peak_tok_per_s", None)  # the same every run
