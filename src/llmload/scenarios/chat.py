"""The main scenario: chat clients streaming /v1/chat/completions back to back.

    locust -f "$(llmload scenarios chat)" --headless -u 32 -r 32 -t 1m --host http://127.0.0.1:8000

llmload's options (`llmload options` lists them; Locust's --help cannot) set the model,
lengths, streaming, warm-up and results directory; each has an LLMLOAD_* environment variable.
"""

from locust import events

from llmload.locust import ChatUser, install

install(events)

__all__ = ["ChatUser"]
