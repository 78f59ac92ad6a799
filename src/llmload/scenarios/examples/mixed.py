"""A mixed deployment: chat, RAG and embeddings users in fixed proportions (Locust weights).

    locust -f "$(llmload scenarios examples/mixed)" --headless -u 20 -r 20 -t 1m \
        --host http://127.0.0.1:8000

Of every 10 users, 6 chat (short prompts, 128-token answers), 2 send RAG requests (a
4,000-token context, 64-token answers) and 2 embed batches of 8 passages for an index. Each
kind is named, and the summary reports each (``stages[i].by_name["chat"]``, ``["rag"]``,
``["embed"]``) beside the stage's totals.
"""

from locust import constant, events, task

from llmload.locust import LLMUser, install, rag_messages, user_message

install(events)

__all__ = ["Chat", "Embed", "Rag"]


class Chat(LLMUser):
    weight = 6

    @task
    def chat(self) -> None:
        self.client.chat([user_message(self.text(100))], max_tokens=128, name="chat")


class Rag(LLMUser):
    weight = 2

    @task
    def rag(self) -> None:
        messages = rag_messages(self.text(4_000), "Summarise the context in one sentence.")
        self.client.chat(messages, max_tokens=64, name="rag")


class Embed(LLMUser):
    weight = 2
    wait_time = constant(0.1)

    @task
    def embed(self) -> None:
        self.client.embeddings([self.text(200) for _ in range(8)], name="embed")
