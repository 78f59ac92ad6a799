"""Multi-turn chat: each user holds conversations whose history grows turn by turn.

    locust -f "$(llmload scenarios conversation)" --headless -u 32 -r 32 -t 2m \
        --host http://127.0.0.1:8000 --turns 5 --think-time-s 2 --prompt-tokens 64

Every turn resends the whole conversation so far plus a new user message; replies stand in as
assistant messages of the reply's output length. The summary reports TTFT per turn
(`stages[i].ttft_ms_by_label["turn=N"]`). See docs/workloads.md.
"""

from locust import events

from llmload.locust import ConversationUser, install

install(events)

__all__ = ["ConversationUser"]
