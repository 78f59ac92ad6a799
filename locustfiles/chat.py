"""The main scenario: chat clients streaming /v1/chat/completions back to back.

llmload's installed scenario `chat`, run from the repository: its code and usage are in
src/llmload/scenarios/chat.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.chat import ChatUser

__all__ = ["ChatUser"]
