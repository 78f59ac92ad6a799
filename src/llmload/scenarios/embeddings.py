"""Embeddings: /v1/embeddings requests back to back, a batch of inputs each.

    locust -f "$(llmload scenarios embeddings)" --headless -u 16 -r 16 -t 1m \
        --host http://127.0.0.1:8000 --embedding-batch 8 --prompt-tokens 256

Each request embeds --embedding-batch inputs of --prompt-tokens words. The summary's e2e_ms is
the request latency and input_tok_per_s the throughput (from usage.prompt_tokens); there are
no output tokens, so the output tok/s columns stay empty. See docs/scenarios.md.
"""

from locust import events

from llmload.locust import EmbeddingsUser, install

install(events)

__all__ = ["EmbeddingsUser"]
