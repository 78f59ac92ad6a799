"""A closed-loop load: each user sends its next request as soon as the previous one completes.

One thread per user, one keep-alive connection each, streamed chat requests with seeded +-10%
output-length jitter: the default sweep workload in miniature. Like llmload's prompts, each one
starts with a word unique to its request, so the simulator's prefix cache never hits.
"""

from __future__ import annotations

import random
import socket
import threading
import time

from tests.support.wire import chat_body, connect, request_bytes

END = b"0\r\n\r\n"


def _read_stream(sock: socket.socket) -> int:
    """Read one chunked streamed response to its end; return the bytes read."""
    tail = b""
    total = 0
    while True:
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed mid-response")
        total += len(data)
        tail = (tail + data)[-len(END) :]
        if tail == END:
            return total


def _user(port: int, seed: int, output_tokens: int, prompt_words: int, stop_at: float) -> None:
    rng = random.Random(seed)
    spread = max(1, output_tokens // 10)
    sent = 0
    with connect(port) as sock:
        while time.monotonic() < stop_at:
            n = output_tokens + rng.randint(-spread, spread)
            text = " ".join([f"salt{seed}x{sent}", *["hello"] * (prompt_words - 1)])
            body = chat_body(n, messages=[{"role": "user", "content": text}])
            sock.sendall(request_bytes("/v1/chat/completions", body))
            _read_stream(sock)
            sent += 1


def closed_loop(port: int, users: int, duration_s: float, *, output_tokens: int, prompt_words: int) -> None:
    """Run ``users`` closed-loop users for ``duration_s`` seconds (each finishes its request)."""
    stop_at = time.monotonic() + duration_s
    threads = [
        threading.Thread(target=_user, args=(port, i, output_tokens, prompt_words, stop_at))
        for i in range(users)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(duration_s + 30)


def tokens_at(timeline: list[tuple[int, int]], t_ns: int) -> float:
    """Cumulative tokens written at ``t_ns``, interpolated between decode steps."""
    before = [p for p in timeline if p[0] <= t_ns]
    after = [p for p in timeline if p[0] > t_ns]
    if not before:
        return 0.0
    if not after:
        return float(before[-1][1])
    (t0, n0), (t1, n1) = before[-1], after[0]
    return n0 + (n1 - n0) * (t_ns - t0) / (t1 - t0)
