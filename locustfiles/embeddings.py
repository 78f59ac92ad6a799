"""Embeddings: /v1/embeddings requests back to back, a batch of inputs each.

llmload's installed scenario `embeddings`, run from the repository: its code and usage are in
src/llmload/scenarios/embeddings.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.embeddings import EmbeddingsUser

__all__ = ["EmbeddingsUser"]
