"""An agent that calls a tool and answers with its result, beside long-context RAG requests.

llmload's installed example `examples/agent`, run from the repository: read its code in
src/llmload/scenarios/examples/agent.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.examples.agent import *  # noqa: F403 (its user classes, for Locust to find)
