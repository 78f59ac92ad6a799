"""Chat messages for scenarios: the shapes an OpenAI chat request is made of.

Plain dicts, as the API takes them, so that a scenario can build its own beside these.
"""

from __future__ import annotations

from typing import Protocol


class _Call(Protocol):
    @property
    def id(self) -> str: ...


def system_message(text: str) -> dict[str, str]:
    return {"role": "system", "content": text}


def user_message(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def tool_result(call: _Call, content: str) -> dict[str, str]:
    """The message that answers a tool call with its result (send it after the assistant
    message that made the call: ``[*reply.messages, tool_result(reply.tool_calls[0], "42")]``)."""
    return {"role": "tool", "tool_call_id": call.id, "content": content}


def rag_messages(context: str, question: str) -> list[dict[str, str]]:
    """A retrieval-augmented request: the retrieved context as the system prompt, then the
    question. ``context`` is usually long (``self.text(30_000)`` in a scenario)."""
    return [system_message(f"Answer from this context only.\n\n{context}"), user_message(question)]
