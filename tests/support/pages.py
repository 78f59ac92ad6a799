"""What every self-contained page of llmload must be: no web address, no reference out, and no
script but the chart library, our chart code and an inert block of their data."""

from __future__ import annotations

import re
from typing import Any

import orjson

from llmload.export.charts import csp_hashes, scripts


def assert_self_contained(text: str) -> None:
    assert not re.search(r"https?://", text, re.IGNORECASE)
    assert "<link" not in text and "url(" not in text
    assert all(s.startswith("data:image/") for s in re.findall(r'\ssrc="([^"]*)"', text))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', text)
    assert policy is not None
    assert policy.group(1) == (
        f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {csp_hashes(scripts())}"
    )
    inline = re.findall(r"<script>(.*?)</script>", text, re.DOTALL)
    assert inline == list(scripts())
    assert len(re.findall(r"<script\b", text)) == 3  # the two above and the data


def chart_data(text: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="llmload-charts">(.*?)</script>', text, re.DOTALL)
    assert found is not None
    data: dict[str, Any] = orjson.loads(found.group(1))
    return data
