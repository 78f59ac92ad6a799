"""The reference peer: a streaming client built the way ``vllm bench serve`` (vLLM 0.33.0) is.

    python bench/harness/vllm_style.py URL STREAMS WARMUP_S MEASURE_S MAX_TOKENS OUT.json [STAGGER_S]

``pip install vllm`` pulls CUDA torch (``torch==2.14.0`` plus ``nvidia-*`` wheels, several GB;
its ``Requires-Dist`` is quoted in docs/performance.md), so this is a faithful port of what its
benchmark client runs per request, from ``vllm/benchmarks/lib/endpoint_request_func.py`` and
``serve.py`` of the 0.33.0 wheel: one ``asyncio.run`` loop (no uvloop), one
``aiohttp.ClientSession`` with a ``TCPConnector(limit=STREAMS, keepalive_timeout=60)``,
``response.content.iter_any()``, its ``StreamedResponseHandler`` (str buffer, split on blank
lines), and per message ``time.perf_counter()`` then ``json.loads``. TTFT is from the
``perf_counter()`` taken before ``session.post``, as there. ``STREAMS`` coroutines each send
requests back to back (vLLM's semaphore with ``--max-concurrency STREAMS`` behaves the same);
stream ``i`` starts at ``i * STAGGER_S / STREAMS`` (0: all at once, vLLM's default
``--request-rate inf``).

Added for ground truth only: each token message's ``id`` and ``llmload_sim.sent_ns`` are read
from the dict ``json.loads`` already built (two lookups per message).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import sys
import time
from typing import Any

import aiohttp


class StreamedResponseHandler:
    """vLLM's, unchanged: accumulate text, return complete SSE messages."""

    def __init__(self) -> None:
        self.buffer = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def add_chunk(self, chunk_bytes: bytes) -> list[str]:
        self.buffer += self._decoder.decode(chunk_bytes)
        messages = []
        while "\n\n" in self.buffer:
            message, self.buffer = self.buffer.split("\n\n", 1)
            message = message.strip()
            if message:
                messages.append(message)
        if self.buffer.startswith("data: "):
            content = self.buffer.removeprefix("data: ").strip()
            if content == "[DONE]":
                messages.append(self.buffer.strip())
                self.buffer = ""
            elif content:
                try:
                    json.loads(content)
                    messages.append(self.buffer.strip())
                    self.buffer = ""
                except json.JSONDecodeError:
                    pass
        return messages


def _has_output(choice: dict[str, Any]) -> bool:
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        return False
    if (
        delta.get("content")
        or delta.get("reasoning")
        or delta.get("tool_calls")
        or delta.get("function_call")
    ):
        return True
    return delta.get("content") == "" and "role" not in delta


async def request(session: aiohttp.ClientSession, url: str, payload: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": False, "read_ns": [], "sent_ns": [], "id": None}
    generated_text = ""
    itl: list[float] = []
    st = most_recent = time.perf_counter()
    out["st_ns"] = int(st * 1e9)
    first = False
    async with session.post(url=url, json=payload, headers={"Content-Type": "application/json"}) as r:
        if r.status != 200:
            return out
        handler = StreamedResponseHandler()
        async for chunk_bytes in r.content.iter_any():
            if not chunk_bytes:
                continue
            for message in handler.add_chunk(chunk_bytes):
                if message.startswith(":"):
                    continue
                chunk = message.removeprefix("data: ")
                if chunk == "[DONE]":
                    continue
                timestamp = time.perf_counter()
                data = json.loads(chunk)
                if isinstance(data.get("metrics"), dict):  # _update_server_metrics
                    pass
                if (choices := data.get("choices")) and _has_output(choices[0]):
                    if not first:
                        first = True
                        out["ttft_ns"] = int((timestamp - st) * 1e9)
                    else:
                        itl.append(timestamp - most_recent)
                    generated_text += choices[0]["delta"].get("content") or ""
                    most_recent = timestamp
                    out["read_ns"].append(int(timestamp * 1e9))  # ground truth, not vLLM's
                    out["sent_ns"].append(data["llmload_sim"]["sent_ns"])
                    out["id"] = data["id"]
                elif usage := data.get("usage"):
                    out["output_tokens"] = usage.get("completion_tokens")
    out["ok"] = first
    return out


async def main_async(
    url: str, streams: int, warmup_s: float, measure_s: float, *, max_tokens: int, stagger_s: float
) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(
        limit=streams,
        limit_per_host=streams,
        ttl_dns_cache=300,
        use_dns_cache=True,
        keepalive_timeout=60,
        enable_cleanup_closed=True,
        force_close=False,
        ssl=False,
    )
    session = aiohttp.ClientSession(
        connector=connector, trust_env=True, timeout=aiohttp.ClientTimeout(total=6 * 60 * 60)
    )
    api = url + "/v1/chat/completions"
    t0 = time.perf_counter() + warmup_s
    t1 = t0 + measure_s
    results: list[dict[str, Any]] = []
    cpu: dict[str, float] = {}

    async def user(i: int) -> None:
        await asyncio.sleep(stagger_s * i / streams)
        n = 0
        while time.perf_counter() < t1:
            words = " ".join(f"w{(i * 7919 + n * 31 + k) % 5000}" for k in range(128))
            payload = {
                "model": "sim",
                "messages": [{"role": "user", "content": words}],
                "max_completion_tokens": max_tokens,
                "stream": True,
                "stream_options": {"include_usage": True},
                "ignore_eos": True,
            }
            results.append(await request(session, api, payload))
            n += 1

    async def clock() -> None:
        await asyncio.sleep(warmup_s)
        cpu["t0"] = time.process_time()
        await asyncio.sleep(measure_s)
        cpu["t1"] = time.process_time()

    await asyncio.gather(clock(), *(user(i) for i in range(streams)))
    await session.close()
    return {
        "client": "vllm-style",
        "window_ns": [int(t0 * 1e9), int(t1 * 1e9)],
        "cpu_window_s": cpu["t1"] - cpu["t0"],
        "requests": results,
    }


def main() -> None:
    url, streams, warmup, measure, max_tokens, out = sys.argv[1:7]
    stagger = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    result = asyncio.run(
        main_async(
            url, int(streams), float(warmup), float(measure), max_tokens=int(max_tokens), stagger_s=stagger
        )
    )
    with open(out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
