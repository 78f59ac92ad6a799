"""The replay's schedule: the window, the speed, the loop, and a fleet's exact split."""

from __future__ import annotations

import itertools

import pytest

from llmload.errors import ConfigError
from llmload.workload.replay import Replay, ReplaySpec, parse_window
from llmload.workload.traces import Trace, TraceEntry

TIMES = (0.0, 0.5, 1.0, 1.5, 4.0, 9.0)
TRACE = Trace("t.jsonl", "jsonl", tuple(TraceEntry(t, 10, 5) for t in TIMES))


def offsets(replay: Replay, share: int = 0, shares: int = 1, count: int | None = None) -> list[float]:
    return [t for t, _, _ in itertools.islice(replay.schedule(share, shares), count)]


def test_one_pass_sends_every_entry_at_its_time_and_lasts_n_mean_gaps() -> None:
    replay = Replay.of(TRACE, ReplaySpec())
    assert offsets(replay) == list(TIMES)
    assert replay.pass_s == pytest.approx(9.0 * 6 / 5)  # the last entry plus one mean gap
    assert replay.requests_per_s == pytest.approx(6 / replay.pass_s)
    assert replay.duration_s == replay.pass_s


def test_speed_two_halves_the_schedule_and_the_pass() -> None:
    normal, fast = Replay.of(TRACE, ReplaySpec()), Replay.of(TRACE, ReplaySpec(speed=2))
    assert offsets(fast) == [t / 2 for t in TIMES]
    assert fast.pass_s == pytest.approx(normal.pass_s / 2)
    assert fast.requests_per_s == pytest.approx(2 * normal.requests_per_s)


def test_a_window_keeps_start_to_end_measured_from_its_start() -> None:
    replay = Replay.of(TRACE, ReplaySpec(start_s=0.5, end_s=4.0))
    assert offsets(replay) == [0.0, 0.5, 1.0]  # 4.0 is the end, not in it
    assert replay.pass_s == 3.5
    assert [e.t_s for e in replay.entries] == [0.5, 1.0, 1.5]


def test_a_looped_window_repeats_back_to_back_forever() -> None:
    replay = Replay.of(TRACE, ReplaySpec(start_s=0.0, end_s=2.0, loop=True))
    got = list(itertools.islice(replay.schedule(), 9))
    assert [t for t, _, _ in got] == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
    assert [(p, i) for _, p, i in got[3:6]] == [(0, 3), (1, 0), (1, 1)]
    assert replay.duration_s == float("inf")


@pytest.mark.parametrize("shares", [1, 2, 3, 5])
def test_shares_split_the_schedule_exactly(shares: int) -> None:
    replay = Replay.of(TRACE, ReplaySpec(loop=True))
    merged = sorted(
        item
        for share in range(shares)
        for item in itertools.islice(replay.schedule(share, shares), 60 // shares)
    )
    assert merged == list(itertools.islice(replay.schedule(), 60))


def test_a_window_without_requests_names_the_traces_span() -> None:
    with pytest.raises(ConfigError, match=r"--trace-window='20:30'.*spans 0 to 9 s"):
        Replay.of(TRACE, ReplaySpec(start_s=20, end_s=30))


@pytest.mark.parametrize(
    ("text", "window"),
    [("60:120", (60.0, 120.0)), ("60:", (60.0, None)), (":5", (0.0, 5.0)), (None, (0.0, None))],
)
def test_windows_parse(text: str | None, window: tuple[float, float | None]) -> None:
    assert parse_window(text) == window


@pytest.mark.parametrize("text", ["60", "a:b", "1:2:3"])
def test_bad_windows_say_how_to_write_one(text: str) -> None:
    with pytest.raises(ConfigError, match="START:END"):
        parse_window(text)


@pytest.mark.parametrize(
    ("spec", "flag"),
    [
        ({"speed": 0}, "--trace-speed"),
        ({"speed": float("nan")}, "--trace-speed"),
        ({"start_s": -1}, "--trace-window"),
        ({"start_s": 5, "end_s": 5}, "--trace-window"),
    ],
)
def test_bad_specs_name_their_flag(spec: dict[str, float], flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        ReplaySpec(**spec)  # type: ignore[arg-type]
