"""Reading a Prometheus text exposition (``GET /metrics``) into flat samples.

prometheus_client's own parser does the parsing: it is the reference implementation of the
format (escapes in label values, ``NaN``/``+Inf``, histograms, comments), and it accepts names
with colons such as ``vllm:num_requests_running`` (checked in the tests). What it does not do is
forgive: one malformed line fails the whole text. A server's ``/metrics`` is not ours to fix, so on
such a failure every line is parsed alone and only the bad ones are dropped (and counted).

Metric types are not kept: the scraper matches samples by name, and a name already says what it
is (``_total``, ``_bucket``, ``_sum``, ``_count``).
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True, slots=True)
class Sample:
    """One line of the exposition: a sample name, its labels (sorted pairs) and its value."""

    name: str
    labels: tuple[tuple[str, str], ...]
    value: float

    def label(self, key: str) -> str | None:
        return dict(self.labels).get(key)


@dataclass(frozen=True, slots=True)
class Parsed:
    samples: tuple[Sample, ...]
    bad_lines: int  # lines that could not be parsed and were skipped


def _parse_strict(text: str) -> list[Sample]:
    """All samples, or ValueError if any line is malformed."""
    out: list[Sample] = []
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.append(Sample(s.name, tuple(sorted(s.labels.items())), float(s.value)))
    return out


def parse(text: str) -> Parsed:
    """Every sample of ``text``; malformed lines are skipped rather than failing the scrape."""
    try:
        return Parsed(tuple(_parse_strict(text)), 0)
    except ValueError:
        pass
    samples: list[Sample] = []
    bad = 0
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue  # comments carry only HELP/TYPE, which matching by name does not need
        try:
            samples.extend(_parse_strict(stripped + "\n"))
        except ValueError:
            bad += 1
    return Parsed(tuple(samples), bad)
