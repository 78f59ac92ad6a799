"""Rerank: /v1/rerank requests back to back, one query and a list of documents each.

llmload's installed scenario `rerank`, run from the repository: its code and usage are in
src/llmload/scenarios/rerank.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.rerank import RerankUser

__all__ = ["RerankUser"]
