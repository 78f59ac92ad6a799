"""How a finished record's tokens are counted: by the server's usage where it sent one, else
by the events (docs/metrics.md, token counts).

Apart from the recorder, which gathers the counters while the response streams: this is the
decision made once at the end, pure, from what was gathered.
"""

from __future__ import annotations

from llmload.core.record import OK, RequestRecord, TokenSource


def settle_tokens(
    rec: RequestRecord, usage: int | None, continuous: bool, thought: int, thought_usage: int | None
) -> None:
    """``usage``: the last usage.completion_tokens seen (None: none was sent); ``continuous``:
    every token-bearing event carried usage; ``thought``: the reasoning events' tokens;
    ``thought_usage``: the server's own count of them."""
    if rec.stream and usage is not None and continuous and rec.event_tokens:
        rec.token_source = TokenSource.CONTINUOUS
        rec.output_tokens = usage
    elif usage is not None and rec.outcome == OK:
        rec.token_source = TokenSource.USAGE
        rec.output_tokens = usage
        rec.spread_tokens(usage)
    else:
        rec.token_source = TokenSource.ESTIMATED
        rec.output_tokens = len(rec.event_ns) if rec.stream else (usage or 0)
        for i in range(len(rec.event_tokens)):
            rec.event_tokens[i] = 1
    rec.reasoning_tokens = _reasoning_tokens(rec, thought, thought_usage)


def _reasoning_tokens(rec: RequestRecord, thought: int, thought_usage: int | None) -> int:
    """The server's count of the thinking when it sent one; else the tokens of the reasoning
    events: exact under continuous usage, one each when estimated, and a final usage spread
    over the events gives the reasoning events their share of it."""
    if thought_usage is not None:
        return max(0, min(thought_usage, rec.output_tokens))
    if rec.token_source is TokenSource.USAGE and rec.event_tokens:
        return round(rec.output_tokens * thought / len(rec.event_tokens))
    return thought
