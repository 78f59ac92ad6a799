"""What llmload can ask of an engine it has no route for: nothing, said as such, with no request."""

from __future__ import annotations

from llmload.target.control import profile, reset_cache


def test_an_engine_without_a_profiler_or_a_reset_is_told_without_a_request() -> None:
    # a closed port: a request would fail, and the answer would say so instead
    assert profile("http://127.0.0.1:9", "llama.cpp", {}, "start") == (
        "no profiler start: a llama.cpp server has no profiler endpoint llmload knows"
    )
    assert reset_cache("http://127.0.0.1:9", "tgi", {}) == (
        "no cache reset: llmload knows no way to clear a tgi server's cache"
    )
