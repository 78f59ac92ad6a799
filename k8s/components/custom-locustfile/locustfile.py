"""An example of a locustfile of your own, shipped to the pods in a ConfigMap.

It runs llmload's chat users (options from the LLMLOAD_* environment, as in
locustfiles/chat.py); replace it with your scenario, keeping `install(events)` so that llmload
measures, merges and writes the results.
"""

from locust import events

from llmload.locust import ChatUser, install

install(events)

__all__ = ["ChatUser"]
