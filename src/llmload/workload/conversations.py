"""Multi-turn conversations: a history that grows by one exchange per turn.

Turn 1 sends a prompt of the source as it is. Every later turn sends the whole history (every
message sent so far, each followed by an assistant message for its reply) and then the last
message of the source's next prompt, a fresh user message. The conversation keeps the first
turn's labels (its prefix group, say) and every request adds ``("turn", "<n>")``, so the summary
reports TTFT per turn.

The client does not keep the reply's text: collecting it would put string building on the hot
path of every token. The assistant message is instead ``filler`` text of as many words as the
reply had output tokens. Under the simulator's tokenizer (a word is a token) the server then
sees exactly the token counts of the real conversation, though not its text; against a real
server the count is as close as the vocabulary's one-token-per-word approximation. A prefix
cache still sees the history repeat exactly from one turn to the next, as it would.

On the Responses API a conversation can instead live on the server (``--conversation-state
server``): each later turn sends only its new user message with ``previous_response_id``, the
id of the last answer, and the server reads the stored history. The history is still kept
here, for the length the server should count (``prompt_tokens_requested``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from llmload.errors import ConfigError
from llmload.workload.prompts import Prompt, text_of
from llmload.workload.words import draw, filler, seed_key, unit

# Each turn is a label value (a TTFT histogram per stage): keep them bounded.
MAX_TURNS = 256
_THINK_STREAM = 4
ConversationState = Literal[
    "resend", "server"
]  # the seed's stream for think times: independent of prompts and prefixes


@dataclass(frozen=True, slots=True)
class Conversation:
    """What one user's conversation has said so far; a new one is ``Conversation()``."""

    history: tuple[Mapping[str, object], ...] = ()
    turns_done: int = 0
    # words of the history (None once a message of unknown length, from a dataset, is in it)
    history_tokens: int | None = 0
    labels: tuple[tuple[str, str], ...] = ()  # the first turn's labels, kept for every turn
    response_id: str | None = None  # the last answer's, where the server keeps the conversation

    def ask(self, prompt: Prompt) -> Prompt:
        """The request of the next turn, given the source's prompt for it: the whole history
        and the new message, or only the new message where the server holds the history."""
        turn = (("turn", str(self.turns_done + 1)),)
        if self.turns_done == 0:
            return Prompt(
                prompt.messages,
                prompt.text,
                prompt.prompt_tokens_requested,
                prompt.max_tokens,
                prompt.source,
                prompt.labels + turn,
            )
        message = prompt.messages[-1]
        messages = (*self.history, message)
        requested = None
        if self.history_tokens is not None and prompt.prompt_tokens_requested is not None:
            requested = self.history_tokens + len(text_of(message).split())
        return Prompt(
            messages=(message,) if self.response_id is not None else messages,
            # /v1/completions: the conversation as plain text, without any model's template
            text="\n\n".join(text_of(m) for m in messages),
            prompt_tokens_requested=requested,
            max_tokens=prompt.max_tokens,
            source=prompt.source,
            labels=self.labels + turn,
        )

    def answered(self, asked: Prompt, output_tokens: int, response_id: str | None = None) -> Conversation:
        """The conversation after ``asked`` (from ``ask``) got a reply of ``output_tokens``;
        ``response_id``: the reply's, when the server keeps the conversation."""
        reply = {"role": "assistant", "content": filler(output_tokens)}
        known = asked.prompt_tokens_requested
        sent = asked.messages if self.response_id is None else (*self.history, *asked.messages)
        return Conversation(
            history=(*sent, reply),
            turns_done=self.turns_done + 1,
            history_tokens=None if known is None else known + max(output_tokens, 0),
            labels=asked.labels[:-1],  # ask() put the turn label last
            response_id=response_id,
        )


@dataclass(frozen=True, slots=True)
class ConversationSpec:
    """``--turns`` per conversation and ``--think-time-s`` between them."""

    turns: int = 4
    think_time_s: float = 0.0
    # where the history lives: resent with every turn, or on the server (the Responses API's
    # previous_response_id)
    state: ConversationState = "resend"

    def __post_init__(self) -> None:
        if isinstance(self.turns, bool) or not 1 <= self.turns <= MAX_TURNS:
            raise ConfigError("--turns", self.turns, f"must be 1 to {MAX_TURNS}")
        if not 0.0 <= self.think_time_s < float("inf"):  # NaN fails too
            raise ConfigError("--think-time-s", self.think_time_s, "must be 0 or more seconds")
        if self.state not in ("resend", "server"):
            raise ConfigError("--conversation-state", self.state, "must be resend or server")

    def think_s(self, seed: int, user_index: int, request_index: int) -> float:
        """The pause after this request before the next turn: uniform over ±50% of the mean.

        Seeded per (user, request) like every draw, and spread so users that started together
        drift apart instead of sending their turns in lockstep.
        """
        if self.think_time_s == 0.0:
            return 0.0
        key = seed_key(seed, _THINK_STREAM)
        return self.think_time_s * (0.5 + unit(draw(key, user_index, request_index)))
