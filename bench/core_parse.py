"""Events per CPU-second of the pure core's hot path: SSE decode + chunk parse.

    .venv/bin/python bench/core_parse.py [--events N] [--smoke]

Feeds a realistic vLLM-style stream (~250-byte events with continuous usage stats) to
``SSEDecoder`` and ``parse_chunk``, in reads of 16 events, of 1 event, and of 1,400 bytes (an
MTU-sized read that splits events), and prints events per CPU-second for each, decode only and
decode + parse. CPU time (``time.process_time``) is used so a noisy shared machine reads the
same; the best of a few repeats is reported.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from llmload.protocol.chunks import parse_chunk
from llmload.protocol.sse import DONE, SSEDecoder

# A vLLM-style chunk under ``continuous_usage_stats``, 250 bytes on the wire at 3-digit counts
# (the typical size docs/pitfalls.md gives; longer ids and model names make real ones larger).
_EVENT = (
    b'data: {"id":"chatcmpl-6f1c2d","object":"chat.completion.chunk","created":1764445000,'
    b'"model":"Qwen3-8B","choices":[{"index":0,"delta":{"content":" the"},'
    b'"finish_reason":null}],'
    b'"usage":{"prompt_tokens":512,"total_tokens":%d,"completion_tokens":%d}}\n\n'
)


def stream(n: int) -> bytes:
    return b"".join(_EVENT % (512 + i % 1000, i % 1000) for i in range(1, n + 1)) + b"data: [DONE]\n\n"


def feeds_of_events(body: bytes, per_feed: int) -> list[bytes]:
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e]
    return [b"".join(events[i : i + per_feed]) for i in range(0, len(events), per_feed)]


def feeds_of_bytes(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def decode_only(feeds: list[bytes]) -> int:
    decoder = SSEDecoder()
    n = 0
    for feed in feeds:
        n += len(decoder.feed(feed))
    return n + len(decoder.close())


def decode_and_parse(feeds: list[bytes]) -> int:
    decoder = SSEDecoder()
    n = 0
    for feed in feeds:
        for event in decoder.feed(feed):
            if event.data != DONE:
                parse_chunk(event.data)
            n += 1
    return n


def rate(run: Callable[[list[bytes]], int], feeds: list[bytes], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        events = run(feeds)
        best = min(best, time.process_time() - start)
    return events / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--smoke", action="store_true", help="a quick run for CI")
    args = parser.parse_args()
    n = 2_000 if args.smoke else args.events
    body = stream(n)
    print(f"{n} events of {len(_EVENT % (612, 100))} bytes; events per CPU-second, best of 3")
    for label, feeds in (
        ("16 events per read", feeds_of_events(body, 16)),
        ("1 event per read", feeds_of_events(body, 1)),
        ("1400-byte reads", feeds_of_bytes(body, 1400)),
    ):
        decoded = rate(decode_only, feeds, 3)
        parsed = rate(decode_and_parse, feeds, 3)
        print(f"  {label:<20} decode {decoded:>12,.0f}   decode+parse {parsed:>12,.0f}")


if __name__ == "__main__":
    main()
