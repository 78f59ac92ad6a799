"""Agentic sessions: turns that resend the server's real replies and tool results, sub-agents.

    locust -f "$(llmload scenarios agent)" --headless -u 8 -r 8 -t 2m \
        --host http://127.0.0.1:8000 --turns 6 --tool-latency-ms 300 --fan-out 3

Each user runs one session after another. A turn's prompt is the session so far: the first
prompt, then per turn the reply as the server wrote it and a tool result of
--tool-result-tokens words after --tool-latency-ms. After turn --fan-out-at, --fan-out
sub-agents of --sub-agent-turns turns run in parallel and the parent continues with their
answers. Every request carries the session's key in the --session-header headers. The summary
reports sessions per stage (`stages[i].sessions`) and TTFT and cache reuse per turn. See
docs/workloads.md.
"""

from locust import events

from llmload.locust import AgentUser, install

install(events)

__all__ = ["AgentUser"]
