"""Change points by E-divisive means (results/changepoints.py), on seeded series whose changes
are known, and the fingerprint difference each one carries (results/rundiff.py)."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from llmload.export.rundata import read_summary
from llmload.protocol.jsonvalue import JSON
from llmload.results.changepoints import Settings, best_split, change_points, e_divisive
from llmload.results.rundiff import fingerprint_difference
from llmload.results.runrecord import ClientInfo, RunRecord, ServerPrint, record_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "results"
BASE = record_of(read_summary(FIXTURES / "engine-a"), "/results/engine-a")


def run(
    n: int,
    *,
    version: str = "0.9.1",
    args: JSON = None,
    labels: tuple[tuple[str, str], ...] = (),
    engine: str = "vllm",
    commit: str = "c0ffee",
) -> RunRecord:
    return replace(
        BASE,
        run_id=f"run-{n:02d}",
        server=ServerPrint(engine=engine, version=version, models=("m",), launch_args=args),
        labels=labels,
        client=ClientInfo(version="0.1.0", host="h", git_commit=commit),
    )


def noisy(seed: int, *levels: tuple[int, float], noise: float = 0.01) -> list[float]:
    """``count`` runs at ``mean`` for each (count, mean), each value off by ``noise`` (relative sd)."""
    rng = random.Random(seed)
    return [mean * (1 + rng.gauss(0, noise)) for count, mean in levels for _ in range(count)]


def test_one_step_in_thirty_runs_is_marked_at_that_run_and_nowhere_else() -> None:
    values = noisy(39, (12, 1000.0), (18, 1050.0))  # +5% at run 12, 1% noise
    runs = [run(n, version="0.9.1" if n < 12 else "0.9.2") for n in range(30)]
    changes = change_points(runs, values)
    assert [c.index for c in changes] == [12]
    (change,) = changes
    assert (change.run_id, change.before_run_id) == ("run-12", "run-11")
    assert change.mean_before == pytest.approx(sum(values[:12]) / 12)
    assert change.mean_after == pytest.approx(sum(values[12:]) / 18)
    assert change.relative == pytest.approx(0.05, abs=0.01)
    assert change.p_value == 1 / 200  # no shuffle of 199 reached it
    assert change.differences == ("vllm 0.9.1 → 0.9.2",)
    assert change.describe().startswith("+") and change.describe().endswith("(p=0.005): vllm 0.9.1 → 0.9.2")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_flat_noisy_series_has_no_change_point(seed: int) -> None:
    assert e_divisive(noisy(seed, (30, 1000.0)), Settings()) == ()


def test_two_steps_are_both_found() -> None:
    values = noisy(7, (10, 1000.0), (10, 950.0), (10, 1030.0))
    splits = e_divisive(values, Settings())
    assert [s.index for s in splits] == [10, 20]
    assert all(s.p_value <= 0.01 for s in splits)
    changes = change_points([run(n) for n in range(30)], values)
    means = [sum(values[i : i + 10]) / 10 for i in (0, 10, 20)]
    assert [(c.mean_before, c.mean_after) for c in changes] == [
        pytest.approx((means[0], means[1])),
        pytest.approx((means[1], means[2])),  # the segment between is after one and before the other
    ]
    assert [c.relative for c in changes] == [
        pytest.approx(means[1] / means[0] - 1),
        pytest.approx(means[2] / means[1] - 1),
    ]
    assert (changes[0].relative or 0) < 0 < (changes[1].relative or 0)


def test_the_same_series_gives_the_same_points_and_runs_without_a_value_are_passed_over() -> None:
    values: list[float | None] = [*noisy(5, (12, 80.0), (12, 88.0))]
    values[3] = values[17] = None  # a run that did not measure the level
    runs = [run(n) for n in range(24)]
    first, again = change_points(runs, values), change_points(runs, values)
    assert first == again
    assert [c.index for c in first] == [12] and first[0].before_run_id == "run-11"


def test_too_short_a_series_or_segment_has_nothing_to_split() -> None:
    assert best_split([1.0, 2.0, 3.0, 4.0, 5.0], Settings()) == (0.0, -1)
    assert e_divisive([], Settings()) == ()
    # four runs on each side cannot reach p = 0.01 by any shuffle count: too few runs yet
    assert e_divisive(noisy(1, (4, 100.0), (4, 200.0)), Settings()) == ()
    with pytest.raises(ValueError, match="min_size"):
        e_divisive([1.0, 2.0], Settings(min_size=1))


def test_the_fingerprint_difference_names_engine_flags_labels_and_commit() -> None:
    before = run(0, args={"enforce_eager": True, "max_num_seqs": 256}, labels=(("image", "a"), ("os", "x")))
    after = run(
        1,
        version="0.9.2",
        args={"max_num_seqs": 512, "enable_chunked_prefill": True, "speculative_config": {"k": 3}},
        labels=(("image", "b"), ("branch", "main")),
        commit="deadbeef",
    )
    assert fingerprint_difference(before, after) == (
        "vllm 0.9.1 → 0.9.2",
        "--enforce-eager removed",
        "--max-num-seqs: 256 → 512",
        "--enable-chunked-prefill added",
        '--speculative-config {"k":3} added',
        "image: a → b",
        "label os=x removed",
        "label branch=main added",
        "commit c0ffee → deadbeef",
    )
    assert fingerprint_difference(before, before) == ()
    other = fingerprint_difference(run(0), run(1, engine="sglang", version="0.5.3"))
    assert other == ("vllm 0.9.1 → sglang 0.5.3",)
