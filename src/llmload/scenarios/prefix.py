"""Shared system prompts: groups of users whose requests start with the same prefix.

    locust -f "$(llmload scenarios prefix)" --headless -u 32 -r 32 -t 2m --host http://127.0.0.1:8000 \
        --prefix-groups 4 --prefix-tokens 1024 --prefix-share 0.8 --prompt-tokens 128

80% of requests start with their group's system prompt of 1024 words, the rest with one of
their own of the same length. Against a server with a prefix cache, TTFT per group
(`stages[i].ttft_ms_by_label["group=0"]` ... `["group=none"]`) shows what the cache saves.
The chat scenario with --prefix-groups does the same; this file names the experiment and
defaults it to 4 groups. See docs/workloads.md.
"""

import os

from locust import events

from llmload.locust import ChatUser, install

# A default only: the flag or the variable set by hand wins.
os.environ.setdefault("LLMLOAD_PREFIX_GROUPS", "4")
install(events)

__all__ = ["ChatUser"]
