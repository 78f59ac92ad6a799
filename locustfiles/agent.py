"""Agentic sessions: each user runs sessions whose turns resend the server's replies.

llmload's installed scenario `agent`, run from the repository: its code and usage are in
src/llmload/scenarios/agent.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.agent import AgentUser

__all__ = ["AgentUser"]
