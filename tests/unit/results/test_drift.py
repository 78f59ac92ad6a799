"""Answer drift: whole answers compared, unanswered probes left out, one example of where two
answers part."""

from __future__ import annotations

from llmload.results.drift import drift, example

PROMPTS = ("What is 17 * 23?", "Capital of France?", "First primes?")


def test_identical_answers_do_not_drift() -> None:
    d = drift(PROMPTS, ["391", "Paris.", "2, 3, 5"], [" 391", "Paris.", "2, 3, 5\n"])
    assert (d.compared, d.differing, d.share, d.example) == (3, 0, 0.0, "")
    assert d.text() == "0/3 (0%)"


def test_a_changed_answer_is_counted_and_shown_from_where_it_parts() -> None:
    d = drift(PROMPTS, ["391", "The capital is Paris.", "2, 3, 5"], ["391", "The capital is Lyon.", "2, 3"])
    assert (d.compared, d.differing) == (3, 2)
    assert d.text() == "2/3 (67%)"
    assert d.example == "'Capital of France?': 'The capital is Paris.' vs 'The capital is Lyon.'"


def test_unanswered_probes_are_left_out() -> None:
    d = drift(PROMPTS, [None, "Paris.", None], ["391", "Paris.", "2"])
    assert (d.compared, d.differing) == (1, 0)
    assert drift(PROMPTS, [None] * 3, ["a"] * 3).share is None
    assert drift(PROMPTS, [None] * 3, ["a"] * 3).text() == "-"


def test_a_long_answer_is_clipped_around_its_first_difference() -> None:
    same = "word " * 30
    shown = example("p", same + "alpha and more", same + "beta and more")
    assert shown.startswith("'p': '…") and "alpha" in shown and "beta" in shown
    assert len(shown) < 140
