"""An agent that calls a tool and answers with its result, beside long-context RAG requests.

    locust -f "$(llmload scenarios examples/agent)" --headless -u 8 -r 8 -t 1m \
        --host http://127.0.0.1:8000

Three kinds of request, each named, so the summary reports each on its own
(``stages[i].by_name["agent:ask"]``, ``["agent:follow-up"]``, ``["rag"]``):

- ``agent:ask``: a question with a tool offered; a model that calls it gets
- ``agent:follow-up``: the conversation so far plus the tool's result, and answers in text;
- ``rag``: a 30,000-token retrieved context and a question, a quarter as often.

The simulator answers as models do: a tool call when tools are offered, text once the last
message is the tool's result.
"""

from locust import between, events, task

from llmload.locust import LLMUser, install, rag_messages, tool_result, user_message

install(events)

__all__ = ["Agent"]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a fact up in the knowledge base",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
]


class Agent(LLMUser):
    wait_time = between(0.05, 0.2)

    @task(3)
    def ask(self) -> None:
        question = [user_message(self.text(64))]
        reply = self.client.chat(question, max_tokens=32, tools=TOOLS, name="agent:ask")
        if reply.tool_calls:
            answer = tool_result(reply.tool_calls[0], "42")
            self.client.chat([*reply.messages, answer], max_tokens=64, tools=TOOLS, name="agent:follow-up")

    @task(1)
    def long_context(self) -> None:
        messages = rag_messages(self.text(30_000), "What does the context say about the weather?")
        self.client.chat(messages, max_tokens=64, name="rag")
