"""A multi-turn agent on the Responses API: server-side state against resent history.

llmload's installed example `examples/responses_agent`, run from the repository: read its code in
src/llmload/scenarios/examples/responses_agent.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.examples.responses_agent import *  # noqa: F403 (its user classes, for Locust to find)
