"""A mixed deployment: chat, RAG and embeddings users in fixed proportions (Locust weights).

llmload's installed example `examples/mixed`, run from the repository: read its code in
src/llmload/scenarios/examples/mixed.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.examples.mixed import *  # noqa: F403 (its user classes, for Locust to find)
