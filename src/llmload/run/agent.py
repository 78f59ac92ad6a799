"""One agentic session, sent: turns, tool waits, sub-agents in parallel, and its account.

``workload/agents.py`` says what a session is; this runs one on a user's client. Every request
is an ordinary measured request (its record, the stage's histograms, one Locust event) that
keeps its answer, because the next turn sends it back. A session's requests carry its key in
the ``--session-header`` headers; a sub-agent's key is its parent's with ``/<n>`` added, so a
router keyed on it keeps each sub-agent's own history on one replica too.

Sub-agents run in greenlets of their own, each with its own connection and user id (their
prompts and request ids are salted apart), and are killed with their parent: a run that ends
inside a fan-out records their requests as unfinished, as it does the parent's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import gevent
from greenlet import GreenletExit

from llmload.config.asked import Endpoint
from llmload.core.phases import Phase
from llmload.run.llm_client import LLMClient
from llmload.run.process_run import ProcessRun
from llmload.run.reply import Reply
from llmload.run.request import RequestEvent
from llmload.workload.agent_replay import fit
from llmload.workload.agent_trace import TraceSession, session_for
from llmload.workload.agents import AgentSpec, ReplayAccount, SessionAccount, joined_results, next_history
from llmload.workload.conversations import MAX_TURNS
from llmload.workload.prompts import Prompt, text_of

_NS = 1_000_000


@dataclass(frozen=True, slots=True)
class Seat:
    """Who sends a session's turns: a client and its user id, the session's key, and fresh
    tool-result text of n words (``text(n)``)."""

    client: LLMClient
    user_id: int
    key: str
    text: Callable[[int], str]
    number: int = 0  # the user's sessions before this one: which recorded session it replays


@dataclass(frozen=True, slots=True)
class Agent:
    """What a session needs of its user: the process's session, the report hook for the
    clients of sub-agents, and the API its turns speak."""

    session: ProcessRun
    report: RequestEvent
    endpoint: Endpoint

    @property
    def spec(self) -> AgentSpec:
        return self.session.config.workload.agent

    @property
    def turns(self) -> int:
        return self.session.config.workload.conversation.turns

    def headers(self, key: str) -> dict[str, str]:
        return {name: key for name in self.session.config.request.session_headers}

    def run(self, seat: Seat) -> SessionAccount:
        """One session, sent from ``seat``."""
        stage, window = self.session.current()
        now = time.perf_counter_ns()
        account = SessionAccount(stage, window.phase_at(now) is Phase.MEASURE, now)
        outcome = "unfinished"
        recorded = self.session.agent_sessions
        try:
            if recorded:
                completed = self._replay(seat, session_for(recorded, seat.user_id, seat.number), account)
            else:
                completed = self._turns(seat, account, self.turns, own=True)
            outcome = "completed" if completed is not None else "failed"
        finally:  # GreenletExit included: the run ended inside the session
            account.end(outcome, time.perf_counter_ns())
            self.session.on_session(account)
        return account

    def _turns(self, seat: Seat, account: SessionAccount, turns: int, *, own: bool) -> str | None:
        """Send a session's turns; its last reply's text, or None when a turn failed."""
        spec, headers = self.spec, self.headers(seat.key)
        client, user_id = seat.client, seat.user_id
        prompts = self.session.prompts
        first = prompts.get(user_id, client.count)
        history: Sequence[Mapping[str, object]] = first.messages
        label = "turn" if own else "subturn"
        for turn in range(1, turns + 1):
            # Each turn draws its own output length, as every request of the workload does.
            limit = first.max_tokens if turn == 1 else prompts.get(user_id, client.count).max_tokens
            prompt = Prompt(
                messages=tuple(history),
                text="\n\n".join(text_of(m) for m in history),
                prompt_tokens_requested=first.prompt_tokens_requested if turn == 1 else None,
                max_tokens=limit,
                source="agent",
                labels=(*first.labels, (label, str(turn))),
            )
            reply = client.ask(prompt, self.endpoint, headers=headers)
            _count(account, reply, own=own)
            if not reply.ok:
                return None
            if turn == turns:
                return reply.text
            if own and spec.fans_out_after(turn, turns):
                results = self._fan_out(seat.key, account)
                if results is None:
                    return None
                result = joined_results(results)
            else:
                gevent.sleep(spec.tool_latency_s(self.session.config.workload.seed, user_id, client.count))
                result = seat.text(spec.tool_result_tokens)
            history = next_history(history, reply.text, result)
        return None  # turns < 1 is refused by ConversationSpec

    def _replay(self, seat: Seat, recorded: TraceSession, account: SessionAccount) -> str | None:
        """A recorded session's turns, each after its recorded delay. In a live (delta) session
        the history carries the server's replies, each fitted to the recorded turn after it
        (``workload/agent_replay.py``); in a history session each turn is sent as recorded."""
        headers = self.headers(seat.key)
        replay = account.replay = ReplayAccount()
        history: tuple[Mapping[str, object], ...] = ()
        tools: tuple[Mapping[str, object], ...] | None = None
        reply: Reply | None = None
        for number, turn in enumerate(recorded.turns, 1):
            if turn.delay_s:
                gevent.sleep(turn.delay_s)
            tools = turn.tools if turn.tools is not None else tools
            messages = turn.messages
            if recorded.delta and reply is not None:
                fitted = fit(reply.message, messages, tools)
                replay.spliced += fitted.spliced
                replay.live += not fitted.spliced
                messages = (*history, fitted.reply, *fitted.messages)
            prompt = Prompt(
                messages=messages,
                text="\n\n".join(text_of(m) for m in messages),
                prompt_tokens_requested=None,
                max_tokens=turn.max_tokens,
                source="agent-trace",
                labels=(("turn", str(number) if number <= MAX_TURNS else f">{MAX_TURNS}"),),
            )
            fields = {**(turn.extra or {}), **({} if tools is None else {"tools": list(tools)})}
            reply = seat.client.ask(prompt, self.endpoint, headers=headers, fields=fields or None)
            _count(account, reply, own=True)
            replay.cut += reply.finish_reason == "length"
            if not reply.ok:
                return None
            replay.recorded += not recorded.delta
            history = messages
        if reply is None:
            return None
        replay.live += recorded.delta  # the last reply stands as the server wrote it
        return reply.text

    def _fan_out(self, key: str, account: SessionAccount) -> list[str] | None:
        """Run the sub-agents in parallel and wait for all; their final replies, or None when
        one failed."""
        children = [
            gevent.spawn(self._sub_agent, f"{key}/{n}", account) for n in range(1, self.spec.fan_out + 1)
        ]
        try:
            gevent.joinall(children, raise_error=True)
        except GreenletExit:
            gevent.killall(children)
            raise
        results = [child.value for child in children]
        return None if any(r is None for r in results) else [r for r in results if r is not None]

    def _sub_agent(self, key: str, account: SessionAccount) -> str | None:
        session = self.session
        transport = session.transports.new()
        user_id = session.new_user_id()
        client = LLMClient(self.report, session, user_id, lambda: transport)
        texts = iter(range(1, 1 << 62))
        seat = Seat(client, user_id, key, lambda n: session.texts.get(n, user_id, next(texts)))
        try:
            return self._turns(seat, account, self.spec.sub_turns, own=False)
        finally:
            transport.close()


def _count(account: SessionAccount, reply: Reply, *, own: bool) -> None:
    ttft_ms = reply.timings.ttft_ms
    account.add(
        own_turn=own,
        ttft_ns=None if ttft_ms is None else round(ttft_ms * _NS),
        output_tokens=reply.output_tokens,
        prompt_tokens=reply.prompt_tokens,
        cached_tokens=reply.cached_tokens,
    )
