"""Recording cost per event of each API's stream: chat, the Responses API and Anthropic's
Messages API, through the same ``ResponseRecorder`` (SSE decode, the API's event parser, the
record's appends), side by side in one process.

    .venv/bin/python bench/api_parse.py [--tokens 20000] [--rounds 5] [--smoke] [--out PATH]

Each stream is what the simulator writes for one answer of ``--tokens`` tokens, one token per
event (chat with vLLM's continuous usage on every chunk, as llmload asks; the newer APIs' typed
events as vLLM and llama.cpp write them, usage at the end), fed in reads of one event and of 64
KiB. Rounds alternate the APIs' order; reported is the best round's CPU µs per token-bearing
event, and each API's ratio to chat's. ``--smoke`` (CI): 2,000 tokens, one round.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from llmload.core.phases import Phase
from llmload.core.record import RequestRecord
from llmload.core.recorder import ResponseRecorder
from llmload.core.timeouts import Timeouts
from llmload.sim.api_render import MessagesRenderer, ResponsesRenderer
from llmload.sim.render import DONE_EVENT, ChunkRenderer

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "bench" / "results" / "api_parse.json"
WORD = b" the"


def events(api: str, tokens: int) -> list[bytes]:
    """One write per event, the opening and closing ones included."""
    if api == "chat":
        chat = ChunkRenderer(chat=True, response_id="chatcmpl-6f1c2d", created=1764445000, model="Qwen3-8B",
                             prompt_tokens=512, continuous_usage=True, emit_timestamps=False)  # fmt: skip
        out = [chat.role(0)]
        out += [chat.text(WORD, None if i < tokens else "length", i, 0) for i in range(1, tokens + 1)]
        return [*out, chat.usage(tokens, 0, 0), DONE_EVENT]
    renderer: ResponsesRenderer | MessagesRenderer = (
        ResponsesRenderer(response_id="resp_6f1c2d", created=1764445000, model="Qwen3-8B", prompt_tokens=512)
        if api == "responses"
        else MessagesRenderer(response_id="msg_6f1c2d", model="Qwen3-8B", prompt_tokens=512)
    )
    out = [renderer.role(0)]
    out += [renderer.text(WORD, None, i, 0) for i in range(1, tokens + 1)]
    return [*out, renderer.usage(tokens, 0, 0, finish_reason="length")]


def feeds(writes: list[bytes], per_read: str) -> list[bytes]:
    if per_read == "one":
        return writes
    body = b"".join(writes)
    return [body[i : i + 65536] for i in range(0, len(body), 65536)]


def record_us(api: str, reads: list[bytes], tokens: int) -> float:
    record = RequestRecord("r", "u", 0, Phase.MEASURE, api, True, scheduled_ns=0, sent_ns=0)
    recorder = ResponseRecorder(record, Timeouts())
    start = time.process_time_ns()
    for i, data in enumerate(reads):
        recorder.on_data(i, data)
    recorder.on_end(len(reads))
    done = recorder.finish(len(reads))
    took = time.process_time_ns() - start
    assert done.ok and done.output_tokens == tokens, (
        api,
        done.outcome,
        done.error_detail,
        done.output_tokens,
    )
    return took / tokens / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tokens", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    tokens, rounds = (2_000, 1) if args.smoke else (args.tokens, args.rounds)
    out = args.out if args.out is not None or args.smoke else DEFAULT_OUT
    apis = ["chat", "responses", "messages"]
    streams = {api: events(api, tokens) for api in apis}
    best: dict[str, dict[str, float]] = {}
    for per_read in ("one", "many"):
        got: dict[str, list[float]] = {api: [] for api in apis}
        for k in range(rounds):
            for api in apis if k % 2 == 0 else reversed(apis):
                got[api].append(record_us(api, feeds(streams[api], per_read), tokens))
        best[per_read] = {api: round(min(v), 3) for api, v in got.items()}
    result = {
        "command": " ".join(["bench/api_parse.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%d"),
        "tokens": tokens,
        "rounds": rounds,
        "us_per_event": best,
        "ratio_to_chat": {
            per_read: {api: round(v / row["chat"], 3) for api, v in row.items()}
            for per_read, row in best.items()
        },
    }
    for per_read, row in best.items():
        cells = " · ".join(f"{api} {v:.3f} µs (x{v / row['chat']:.2f})" for api, v in row.items())
        print(f"{per_read} event(s) per read: {cells}")
    if out is not None:
        out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
