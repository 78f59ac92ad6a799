"""The other peer: Locust's stock ``FastHttpUser`` streaming with ``client.iter_lines``.

    python bench/harness/locust_lines.py URL STREAMS WARMUP_S MEASURE_S MAX_TOKENS OUT.json [STAGGER_S]

What people write when they load-test an LLM with Locust: a ``FastHttpUser`` whose task posts
the chat request and walks ``self.client.iter_lines(...)`` (Locust's own helper over
geventhttpclient's ``iter_content(1024)``), stamps each ``data:`` line with
``time.perf_counter_ns()`` and ``json.loads`` it. Run in-process by a Locust local runner (the
same as ``locust --headless``, without the CLI), spawning ``STREAMS / STAGGER_S`` users a
second (all at once with 0). TTFT is from the stamp taken before the call.

Added for ground truth only: each token line's ``id`` and ``llmload_sim.sent_ns``, read from
the dict ``json.loads`` already built.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import gevent
from locust import FastHttpUser, constant, task
from locust.env import Environment

RESULTS: list[dict[str, Any]] = []  # a script's own state: one run per process
STATE = {"stop_at": 0.0, "in_flight": 0, "max_tokens": 100}


class LinesUser(FastHttpUser):
    wait_time = constant(0)

    @task
    def chat(self) -> None:
        if time.perf_counter() >= STATE["stop_at"]:
            gevent.sleep(3600)  # the window is over: finish nothing new
        STATE["in_flight"] += 1
        n = len(RESULTS)
        words = " ".join(f"w{(id(self) + n * 31 + k) % 5000}" for k in range(128))
        payload = {
            "model": "sim",
            "messages": [{"role": "user", "content": words}],
            "max_tokens": STATE["max_tokens"],
            "stream": True,
            "ignore_eos": True,
        }
        out: dict[str, Any] = {"read_ns": [], "sent_ns": [], "id": None, "ok": False}
        start = time.perf_counter_ns()
        out["st_ns"] = start
        for line in self.client.iter_lines("/v1/chat/completions", method="POST", json=payload):
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                continue
            t = time.perf_counter_ns()
            obj = json.loads(data)
            choices = obj.get("choices")
            if choices and choices[0].get("delta", {}).get("content"):
                if not out["read_ns"]:
                    out["ttft_ns"] = t - start
                out["read_ns"].append(t)
                out["sent_ns"].append(obj["llmload_sim"]["sent_ns"])
                out["id"] = obj["id"]
        out["ok"] = bool(out["read_ns"])
        RESULTS.append(out)
        STATE["in_flight"] -= 1


def main() -> None:
    url, streams, warmup, measure, max_tokens, path = sys.argv[1:7]
    n, warmup_s, measure_s = int(streams), float(warmup), float(measure)
    stagger_s = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
    LinesUser.host = url
    STATE["max_tokens"] = int(max_tokens)
    t0 = time.perf_counter() + warmup_s
    STATE["stop_at"] = t0 + measure_s
    env = Environment(user_classes=[LinesUser])
    runner = env.create_local_runner()
    runner.start(n, spawn_rate=n / stagger_s if stagger_s > 0 else n)
    gevent.sleep(max(0.0, t0 - time.perf_counter()))
    cpu0 = time.process_time()
    gevent.sleep(measure_s)
    cpu1 = time.process_time()
    deadline = time.perf_counter() + 60
    while STATE["in_flight"] > 0 and time.perf_counter() < deadline:
        gevent.sleep(0.05)
    runner.quit()
    result = {
        "client": "locust-fasthttp-lines",
        "window_ns": [int(t0 * 1e9), int((t0 + measure_s) * 1e9)],
        "cpu_window_s": cpu1 - cpu0,
        "requests": RESULTS,
    }
    with open(path, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
