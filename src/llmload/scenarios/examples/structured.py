"""Structured output: a JSON schema in ``response_format``, and a check that the answer obeys it.

    locust -f "$(llmload scenarios examples/structured)" --headless -u 8 -r 8 -t 1m \
        --host http://127.0.0.1:8000

Every answer is parsed and checked for the schema's required keys and types. One that fails
counts as a failed request of kind ``check_failed``, with the reason as its error: a server
whose constrained decoding breaks shows up in the error rate and the verdict, not only in
latency. Checking costs the client a parse per answer, after the answer has been timed.
"""

from typing import Any

import orjson
from locust import events, task

from llmload.locust import LLMUser, Reply, install, user_message

install(events)

__all__ = ["Extractor"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "sentiment": {"type": "string", "enum": ["positive", "neutral", "negative"]},
        "confidence": {"type": "number", "minimum": 0},
    },
    "required": ["summary", "sentiment", "confidence"],
}
_TYPES: dict[str, type | tuple[type, ...]] = {"string": str, "number": (int, float)}


def obeys_schema(reply: Reply) -> str | None:
    """None when the answer is a JSON object with the schema's keys and types, else why not."""
    try:
        answer = orjson.loads(reply.text)
    except orjson.JSONDecodeError as exc:
        return f"not JSON: {exc}"
    if not isinstance(answer, dict):
        return "not a JSON object"
    for key in SCHEMA["required"]:
        kind = SCHEMA["properties"][key]["type"]
        if not isinstance(answer.get(key), _TYPES[kind]):
            return f"{key!r} missing or not a {kind}"
    return None


class Extractor(LLMUser):
    @task
    def extract(self) -> None:
        self.client.chat(
            [user_message(f"Summarise this review as JSON: {self.text(200)}")],
            max_tokens=64,
            response_format={"type": "json_schema", "json_schema": {"name": "review", "schema": SCHEMA}},
            check=obeys_schema,
            name="extract",
        )
