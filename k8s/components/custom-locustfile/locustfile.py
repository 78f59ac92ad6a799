"""An example of a locustfile of your own, shipped to the pods in a ConfigMap.

A scenario (docs/scenarios.md): an `LLMUser` whose tasks call `self.client`, each call measured
as llmload's built-in users' requests are and reported per `name`. Replace it with yours,
keeping `install(events)` so that llmload measures, merges and writes the results.
"""

from locust import events, task

from llmload.locust import LLMUser, install, rag_messages, user_message

install(events)


class Chat(LLMUser):
    weight = 3

    @task
    def chat(self) -> None:
        self.client.chat([user_message(self.text(128))], max_tokens=128, name="chat")


class Rag(LLMUser):
    weight = 1

    @task
    def rag(self) -> None:
        self.client.chat(rag_messages(self.text(4_000), "Summarise it."), max_tokens=64, name="rag")


__all__ = ["Chat", "Rag"]
