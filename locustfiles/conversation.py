"""Multi-turn chat: each user holds conversations whose history grows turn by turn.

llmload's installed scenario `conversation`, run from the repository: its code and usage are in
src/llmload/scenarios/conversation.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.conversation import ConversationUser

__all__ = ["ConversationUser"]
