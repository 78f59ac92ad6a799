"""The scenario API: everything a scenario imports, ``from llmload.locust import ...``.

``_EXPORTS`` is the one list of it: each public name and the module that defines it.
``__all__``, ``dir()`` and the lazy ``__getattr__`` read it, and a test holds the
``TYPE_CHECKING`` imports (there for type checkers, which cannot follow ``__getattr__``) to it.

This is also the Locust adapter, the only subpackage that imports locust. Importing locust
monkey-patches the whole process, so a name is imported when it is first asked for: a user class
or shape imports locust then, and ``import llmload.locust`` alone, the client's reply types and
the message helpers do not (tests and the CLI run in a plain process).
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names _EXPORTS serves, spelled out for type checkers
    from llmload.core.answer import Answer as Answer
    from llmload.core.answer import ToolCall as ToolCall
    from llmload.locust.agent import AgentUser as AgentUser
    from llmload.locust.conversation import ConversationUser as ConversationUser
    from llmload.locust.openloop import OpenLoopUser as OpenLoopUser
    from llmload.locust.plugin import install as install
    from llmload.locust.shape import SweepShape as SweepShape
    from llmload.locust.shape import TraceShape as TraceShape
    from llmload.locust.trace import TraceUser as TraceUser
    from llmload.locust.user import ChatUser as ChatUser
    from llmload.locust.user import CompletionsUser as CompletionsUser
    from llmload.locust.user import EmbeddingsUser as EmbeddingsUser
    from llmload.locust.user import LLMUser as LLMUser
    from llmload.locust.user import RerankUser as RerankUser
    from llmload.run.llm_client import LLMClient as LLMClient
    from llmload.run.reply import Check as Check
    from llmload.run.reply import Reply as Reply
    from llmload.run.reply import Timings as Timings
    from llmload.workload.messages import rag_messages as rag_messages
    from llmload.workload.messages import system_message as system_message
    from llmload.workload.messages import tool_result as tool_result
    from llmload.workload.messages import user_message as user_message
    from llmload.workload.prompts import Prompt as Prompt

_USERS = "llmload.locust.user"
_CLIENT = "llmload.run.llm_client"
_MESSAGES = "llmload.workload.messages"

_EXPORTS: dict[str, str] = {
    # the user classes to subclass or run, and the shapes (these import locust)
    "LLMUser": _USERS,
    "ChatUser": _USERS,
    "CompletionsUser": _USERS,
    "EmbeddingsUser": _USERS,
    "RerankUser": _USERS,
    "ConversationUser": "llmload.locust.conversation",
    "AgentUser": "llmload.locust.agent",
    "OpenLoopUser": "llmload.locust.openloop",
    "TraceUser": "llmload.locust.trace",
    "SweepShape": "llmload.locust.shape",
    "TraceShape": "llmload.locust.shape",
    "install": "llmload.locust.plugin",
    # self.client and what its calls return
    "LLMClient": _CLIENT,
    "Reply": "llmload.run.reply",
    "Timings": "llmload.run.reply",
    "Check": "llmload.run.reply",
    "Answer": "llmload.core.answer",
    "ToolCall": "llmload.core.answer",
    # what self.prompt() returns, and the messages a request is built of
    "Prompt": "llmload.workload.prompts",
    "user_message": _MESSAGES,
    "system_message": _MESSAGES,
    "tool_result": _MESSAGES,
    "rag_messages": _MESSAGES,
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups find it without coming here
    return value


def __dir__() -> list[str]:
    # The API, not the module's own helpers nor the submodules imports have set on it.
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
