"""Answer drift: the share of probe answers that differ from a reference set of answers to the
same prompts, with one example. Pure.

Answers are compared whole, after trimming the whitespace around them: at temperature 0 an
engine that computes the same numbers writes the same text, so any difference is a change in
the arithmetic (a quantized kernel, a drafter that is not lossless, a batch-size-dependent
reduction), however small it looks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_SHOWN = 48  # characters of each answer shown from their first difference


@dataclass(frozen=True, slots=True)
class Drift:
    compared: int  # probes answered in both sets
    differing: int
    example: str = ""  # the first differing probe, its two answers from where they part

    @property
    def share(self) -> float | None:
        return self.differing / self.compared if self.compared else None

    def text(self) -> str:
        """``2/6 (33%)``; ``-`` when nothing could be compared."""
        share = self.share
        return "-" if share is None else f"{self.differing}/{self.compared} ({share:.0%})"


def _clip(text: str, start: int) -> str:
    part = text[start : start + _SHOWN]
    return ("…" if start else "") + part + ("…" if len(text) > start + _SHOWN else "")


def example(prompt: str, answer: str, reference: str) -> str:
    """Where two answers part: ``'Compute 17…': '…391.' vs '…381.'``."""
    same = 0
    for a, b in zip(answer, reference, strict=False):
        if a != b:
            break
        same += 1
    start = 0 if same < 24 else same - 12  # a short common start is shown whole
    return f"{prompt[:40]!r}: {_clip(answer, start)!r} vs {_clip(reference, start)!r}"


def drift(prompts: Sequence[str], answers: Sequence[str | None], reference: Sequence[str | None]) -> Drift:
    compared = differing = 0
    first = ""
    for prompt, answer, ref in zip(prompts, answers, reference, strict=False):
        if answer is None or ref is None:
            continue
        compared += 1
        if answer.strip() != ref.strip():
            differing += 1
            first = first or example(prompt, answer.strip(), ref.strip())
    return Drift(compared, differing, first)
