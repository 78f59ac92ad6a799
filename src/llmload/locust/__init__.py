"""The Locust adapter: the only subpackage that imports locust.

Importing locust monkey-patches the whole process, so this package imports it only when a user
class is asked for (``from llmload.locust import ChatUser``); ``llmload.config.args`` and the
other pure helpers stay importable in a plain process (tests, the CLI).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names __getattr__ serves, for type checkers
    from llmload.locust.openloop import OpenLoopUser
    from llmload.locust.plugin import install
    from llmload.locust.shape import SweepShape, TraceShape
    from llmload.locust.trace import TraceUser
    from llmload.locust.user import ChatUser, CompletionsUser, EmbeddingsUser, LLMUser
    from llmload.workload.messages import rag_messages, system_message, tool_result, user_message

__all__ = [
    "ChatUser",
    "CompletionsUser",
    "EmbeddingsUser",
    "LLMUser",
    "OpenLoopUser",
    "SweepShape",
    "TraceShape",
    "TraceUser",
    "install",
    "rag_messages",
    "system_message",
    "tool_result",
    "user_message",
]


def __getattr__(name: str) -> Any:
    if name in ("ChatUser", "CompletionsUser", "EmbeddingsUser", "LLMUser"):
        from llmload.locust import user

        return getattr(user, name)
    if name in ("rag_messages", "system_message", "tool_result", "user_message"):
        from llmload.workload import messages

        return getattr(messages, name)
    if name == "OpenLoopUser":
        from llmload.locust.openloop import OpenLoopUser

        return OpenLoopUser
    if name in ("SweepShape", "TraceShape"):
        from llmload.locust import shape

        return getattr(shape, name)
    if name == "TraceUser":
        from llmload.locust.trace import TraceUser

        return TraceUser
    if name == "install":
        from llmload.locust.plugin import install

        return install
    raise AttributeError(name)
