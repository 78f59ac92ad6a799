"""The legacy text-completions endpoint, /v1/completions, with the same options as chat.py."""

from locust import events

from llmload.locust import CompletionsUser, install

install(events)

__all__ = ["CompletionsUser"]
