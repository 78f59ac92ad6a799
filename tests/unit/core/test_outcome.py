"""A request's outcome: ok, unfinished, cancelled, or one of the error kinds, under the same values."""

from __future__ import annotations

from llmload.core.record import NOT_FAILED, Outcome
from llmload.errors import ErrorKind


def test_every_error_kind_is_an_outcome_of_the_same_name_and_value() -> None:
    failures = {o.name: o.value for o in Outcome if o not in NOT_FAILED}
    assert failures == {k.name: k.value for k in ErrorKind}
    assert all(Outcome.failed(k) == k.value for k in ErrorKind)
