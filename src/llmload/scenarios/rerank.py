"""Rerank: /v1/rerank requests back to back, one query and a list of documents each.

    locust -f "$(llmload scenarios rerank)" --headless -u 8 -r 8 -t 1m \
        --host http://127.0.0.1:8000 --rerank-documents 16 --prompt-tokens 128

Each request orders --rerank-documents documents of --prompt-tokens words by a query of as
many. The summary's e2e_ms is the request latency and input_tok_per_s the throughput (from the
server's usage); there are no output tokens. See docs/scenarios.md.
"""

from locust import events

from llmload.locust import RerankUser, install

install(events)

__all__ = ["RerankUser"]
