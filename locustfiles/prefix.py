"""Shared system prompts: groups of users whose requests start with the same prefix.

llmload's installed scenario `prefix`, run from the repository: its code and usage are in
src/llmload/scenarios/prefix.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.prefix import ChatUser

__all__ = ["ChatUser"]
