"""Summaries for unit tests: the fields a test names over neutral values for the rest, read
through the same ``from_json`` as a real ``summary.json``."""

from __future__ import annotations

from typing import Any

from llmload.summary import SCHEMA_VERSION, Stage, Summary, from_json, read

_LATENCIES = ("ttft", "ttfot", "itl", "tpot", "e2e", "e2e_scheduled", "chunk_gap", "connect", "queue")


def stage_json(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "index": 0,
        "concurrency": 4,
        "duration_s": 10.0,
        "window_ns": None,
        "requests": {"ok": 0, "failed": 0, "unfinished": 0, "warmup": 0, "drain": 0},
        "errors": {},
        "error_rate": None,
        "attempts": {"finished": 0, "failed": 0, "unfinished": 0, "errors": {}},
        "error_samples": {},
        "partial": False,
        "finish_reasons": {},
        "output_tokens": 0,
        "window_output_tokens": 0,
        "client_bound": False,
        "client_health": {},
        "warnings": [],
        "ttft_ms_by_label": {},
        **dict.fromkeys(
            (
                "output_tok_per_s",
                "input_tok_per_s",
                "total_tok_per_s",
                "request_per_s",
                "goodput_req_per_s",
                "prompt_tokens_requested_mean",
                "cached_prompt_tokens",
                "prompt_cache_hit_rate",
                "token_source",
                "tokens_per_event",
                "events_per_read",
                "output_tokens_per_request",
                "prompt_tokens_per_request",
                "rate_req_per_s",
                *(f"{m}_ms" for m in _LATENCIES),
            )
        ),
    }
    return {**base, **fields}


def stage(**fields: Any) -> Stage:
    return from_json(Stage, stage_json(**fields))


def summary(*stages: dict[str, Any], complete: bool = True, **run: Any) -> Summary:
    """``stages`` as ``stage_json`` fields; ``run``: fields of ``run`` over a local run's."""
    return read(
        {
            "schema_version": SCHEMA_VERSION,
            "complete": complete,
            "headline": None,
            "run": {
                "id": "test",
                "started_at": None,
                "target": "http://127.0.0.1:9",
                "model": None,
                "scenario": "chat",
                "options": {},
                "records": [],
                "reproducibility": {},
                "stopped": None,
                **run,
            },
            "server": {},
            "stages": [stage_json(**s) for s in stages],
            "warnings": [],
        }
    )
