"""Structured output: a JSON schema in ``response_format``, and a check that the answer obeys it.

llmload's installed example `examples/structured`, run from the repository: read its code in
src/llmload/scenarios/examples/structured.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.examples.structured import *  # noqa: F403 (its user classes, for Locust to find)
