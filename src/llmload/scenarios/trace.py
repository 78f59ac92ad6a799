"""Trace replay: a production trace's requests, each at its own time (open loop).

    locust -f "$(llmload scenarios trace)" --headless --host http://127.0.0.1:8000 \
        --trace mooncake_trace.jsonl --trace-speed 2 --trace-window 0:300 --ignore-eos

Formats: Mooncake JSONL (hash_ids become shared prompt blocks), the Azure LLM inference CSV, and
llmload's JSONL (docs/workloads.md, "Trace replay"). The shape runs one user per process; each
process sends every n-th request. The run ends when the trace has been replayed, unless
--trace-loop repeats it until -t ends. Locust's -u is ignored.
"""

from locust import events

from llmload.locust import TraceShape, TraceUser, install

install(events)

__all__ = ["TraceShape", "TraceUser"]
