"""The Locust adapter: the only subpackage that imports locust."""

from llmload.locust.plugin import install
from llmload.locust.user import ChatUser, CompletionsUser

__all__ = ["ChatUser", "CompletionsUser", "install"]
