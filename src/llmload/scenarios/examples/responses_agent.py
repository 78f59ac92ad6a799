"""A multi-turn agent on the Responses API, two ways side by side: the server keeps the
conversation (``previous_response_id``: each turn sends only its new message), or the client
resends it all (the chat way, on the same API).

    locust -f "$(llmload scenarios examples/responses_agent)" --headless -u 8 -r 8 -t 1m \
        --host http://127.0.0.1:8000

Each turn is named by its way and index (``stateful:2``, ``resent:2``), so the summary's
``by_name`` compares them turn by turn: the same conversation, the same prompt tokens at the
server, but the stateful turn's request is a few words long, and its history is the server's
to find (in its prefix cache when it kept it).
"""

from collections.abc import Mapping

from locust import events, task

from llmload.locust import LLMUser, install, user_message

install(events)

__all__ = ["ResponsesAgent"]

TURNS = 4


class ResponsesAgent(LLMUser):
    @task
    def stateful(self) -> None:
        previous = None
        for turn in range(TURNS):
            reply = self.client.responses(
                self.text(48 if turn == 0 else 12), max_output_tokens=24, previous_response_id=previous,
                name=f"stateful:{turn}",
            )  # fmt: skip
            if not reply.ok or reply.response_id is None:
                return
            previous = reply.response_id

    @task
    def resent(self) -> None:
        history: list[Mapping[str, object]] = []
        for turn in range(TURNS):
            history.append(user_message(self.text(48 if turn == 0 else 12)))
            reply = self.client.responses(history, max_output_tokens=24, name=f"resent:{turn}")
            if not reply.ok:
                return
            history.append({"role": "assistant", "content": reply.text})
