"""--cancel's draws: which requests, and when."""

from __future__ import annotations

import pytest

from llmload.errors import ConfigError
from llmload.workload.cancel import CancelSpec, parse_after


def test_the_share_picks_that_share_of_requests_the_same_way_every_time() -> None:
    spec = CancelSpec(share=0.25, after_ms=(100, 300))
    picks = [spec.delay_s(3, user, request) for user in range(40) for request in range(50)]
    assert picks == [spec.delay_s(3, user, request) for user in range(40) for request in range(50)]
    delays = [d for d in picks if d is not None]
    assert 0.22 < len(delays) / len(picks) < 0.28
    assert all(0.1 <= d <= 0.3 for d in delays) and max(delays) - min(delays) > 0.15
    assert CancelSpec().delay_s(3, 0, 0) is None
    assert CancelSpec(share=1.0, after_ms=(50, 50)).delay_s(3, 7, 9) == 0.05


@pytest.mark.parametrize(("text", "parsed"), [("300", (300.0, 300.0)), ("100-2000", (100.0, 2000.0))])
def test_the_delay_is_a_value_or_a_range(text: str, parsed: tuple[float, float]) -> None:
    assert parse_after(text) == parsed


@pytest.mark.parametrize(
    ("share", "after", "flag"),
    [
        (1.5, (1.0, 1.0), "--cancel"),
        (0.1, (0.0, 10.0), "--cancel-after"),
        (0.1, (20.0, 10.0), "--cancel-after"),
    ],
)
def test_wrong_values_name_their_flag(share: float, after: tuple[float, float], flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        CancelSpec(share=share, after_ms=after)
    with pytest.raises(ConfigError, match="--cancel-after"):
        parse_after("soon")
