"""What one call of a scenario's ``self.client`` got back: the ``Reply`` (the answer, the
outcome, the tokens) and, when asked, the request's own ``Timings``, read from its final record
and the payloads kept for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from llmload.core.answer import Answer, Ranked, ToolCall, read_answer
from llmload.core.api_answer import read_messages, read_responses
from llmload.core.record import OK, Outcome, RequestRecord
from llmload.metrics import derive
from llmload.protocol.jsonvalue import JSON

_MS = 1e6
# A check returns None or True when the answer is right, else False or the reason it is not.
Check = Callable[["Reply"], "str | bool | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Timings:
    """One request's measured times in ms, as the summary's percentiles count them; None where
    the request does not define the metric (a non-streamed request has no TTFT)."""

    ttft_ms: float | None
    ttfot_ms: float | None  # first *answer* token: after any reasoning and tool-call tokens
    tpot_ms: float | None
    e2e_ms: float | None
    itl_ms: tuple[float, ...]  # one gap per token after the first, as the ITL histogram has them

    @classmethod
    def of(cls, r: RequestRecord) -> Timings:
        gaps, counts = derive.token_reads(r).itl()
        tpot = derive.tpot_ns(r)
        return cls(
            ttft_ms=_ms(derive.ttft_ns(r)),
            ttfot_ms=_ms(derive.ttfot_ns(r)),
            tpot_ms=None if tpot is None else tpot / _MS,
            e2e_ms=_ms(derive.e2e_ns(r)),
            itl_ms=tuple(g / _MS for g, n in zip(gaps, counts, strict=True) for _ in range(n)),
        )


def _ms(ns: int | None) -> float | None:
    return None if ns is None else ns / _MS


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """What one call got back. A failed call has an empty answer and says why in ``error``."""

    request_id: str
    outcome: Outcome  # OK, a failure (``http_4xx``, ``check_failed``, ...) or UNFINISHED
    status: int | None
    error: str | None
    answer: Answer
    prompt_tokens: int | None
    output_tokens: int
    cached_tokens: int | None = None  # of prompt_tokens, what the server's usage says its cache held
    sent: tuple[Mapping[str, object], ...] = ()  # the chat messages that were sent
    _record: RequestRecord = field(repr=False, compare=False)

    @property
    def timings(self) -> Timings:
        """Derived when asked: the fold derives every request's measures once, and a scenario
        that never reads these costs nothing more."""
        return Timings.of(self._record)

    @property
    def ok(self) -> bool:
        return self.outcome == OK

    @property
    def text(self) -> str:
        return self.answer.text

    @property
    def reasoning(self) -> str:
        return self.answer.reasoning

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return self.answer.tool_calls

    @property
    def finish_reason(self) -> str | None:
        return self.answer.finish_reason

    @property
    def usage(self) -> Mapping[str, JSON] | None:
        return self.answer.usage

    @property
    def embeddings(self) -> tuple[tuple[float, ...], ...]:
        return self.answer.embeddings

    @property
    def ranking(self) -> tuple[Ranked, ...]:
        """A rerank's documents, best first: each one's ``index`` in the request and ``score``."""
        return self.answer.ranking

    @property
    def response_id(self) -> str | None:
        """The server's id of the answer: a Responses API scenario's ``previous_response_id``."""
        return self.answer.response_id

    @property
    def message(self) -> dict[str, JSON]:
        """The assistant message to append for the next turn."""
        return self.answer.message

    @property
    def messages(self) -> list[Mapping[str, object]]:
        """The conversation so far: what was sent, then the assistant's answer."""
        return [*self.sent, self.message]


_READERS = {"responses": read_responses, "messages": read_messages}


def reply_of(record: RequestRecord, payloads: list[bytes], sent: tuple[Mapping[str, object], ...]) -> Reply:
    # An error answer's body is the server's complaint, not an answer: ``error`` quotes it.
    read = _READERS.get(record.endpoint, read_answer)
    answer = read(payloads, stream=record.stream) if record.status == 200 else Answer()
    return Reply(
        request_id=record.request_id,
        outcome=record.outcome,
        status=record.status,
        error=record.error_detail,
        answer=answer,
        prompt_tokens=record.prompt_tokens,
        output_tokens=record.output_tokens,
        cached_tokens=record.cached_tokens,
        sent=sent,
        _record=record,
    )


@dataclass(slots=True)
class Reading:
    """One call's ``AnswerReader``: it keeps the response's payloads, reads them into a
    ``Reply`` when the request succeeded and asks the scenario's ``check`` about it, and gives
    the call its reply once the record is final."""

    sent: tuple[Mapping[str, object], ...]
    check: Check | None = None
    payloads: list[bytes] = field(default_factory=list)
    _checked: Reply | None = None

    def judge(self, record: RequestRecord) -> str | None:
        if self.check is None:
            return None
        self._checked = reply = reply_of(record, self.payloads, self.sent)
        verdict = self.check(reply)
        return None if verdict is None or verdict is True else verdict or "the scenario's check failed"

    def reply(self, record: RequestRecord) -> Reply:
        """The reply to the call, from its final record: the one the check read (now with the
        outcome it gave), or, with no check or no answer to check, read now."""
        if self._checked is None:
            return reply_of(record, self.payloads, self.sent)
        return replace(self._checked, outcome=record.outcome, error=record.error_detail)
