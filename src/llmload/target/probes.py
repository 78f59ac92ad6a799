"""Asking the quality guard's probes (control plane: httpx, off the measured path).

Each probe is one non-streamed chat completion at temperature 0 (seed 0, for servers that
sample anyway), asked one after another: alone, before a configuration's sweep, and again once
its heaviest stage is full, when it rides along as one more stream. "Full" is read from the
sweep's own Prometheus exporter: the stage's concurrency is the heaviest level and that many
requests are in flight.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
import orjson

from llmload.target.promtext import parse

_POLL_S = 0.5


@dataclass(frozen=True, slots=True)
class Answers:
    texts: tuple[str | None, ...]  # per probe; None: it got no answer (see errors)
    errors: tuple[str, ...] = ()


def _answer(client: httpx.Client, url: str, body: dict[str, object], headers: dict[str, str]) -> str:
    response = client.post(url, content=orjson.dumps(body), headers=headers)
    if response.status_code != 200:
        raise ValueError(f"HTTP {response.status_code}: {response.text[:120]}")
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ValueError("not an OpenAI chat completion") from None
    return str(content or "")


def ask(
    base_url: str,
    prompts: Sequence[str],
    *,
    model: str,
    max_tokens: int,
    headers: dict[str, str],
    timeout_s: float = 120.0,
    stopped: Callable[[], bool] = lambda: False,
) -> Answers:
    """Every prompt's answer at temperature 0, one after another; stops early when ``stopped``."""
    url = f"{base_url.rstrip('/')}/v1/chat/completions"
    texts: list[str | None] = []
    errors: list[str] = []
    sent = {**headers, "content-type": "application/json"}
    with httpx.Client(timeout=timeout_s) as client:
        for prompt in prompts:
            if stopped():
                break
            body: dict[str, object] = {
                "model": model,
                "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max_tokens,
                "temperature": 0,
                "seed": 0,
                "stream": False,
            }
            try:
                texts.append(_answer(client, url, body, sent))
            except (httpx.HTTPError, ValueError) as exc:
                texts.append(None)
                errors.append(f"{prompt[:40]!r}: {type(exc).__name__}: {exc}")
    texts += [None] * (len(prompts) - len(texts))
    return Answers(tuple(texts), tuple(errors))


def _gauges(client: httpx.Client, metrics_url: str) -> dict[str, float]:
    try:
        text = client.get(metrics_url).text
    except httpx.HTTPError:
        return {}
    wanted = ("llmload_stage_concurrency", "llmload_in_flight_requests")
    return {s.name: s.value for s in parse(text).samples if s.name in wanted}


def wait_full(metrics_url: str, concurrency: int, stopped: Callable[[], bool]) -> bool:
    """Wait until the sweep runs its stage at ``concurrency`` with that many requests in
    flight; False when ``stopped`` first (the sweep ended)."""
    with httpx.Client(timeout=2.0) as client:
        while not stopped():
            gauges = _gauges(client, metrics_url)
            level = gauges.get("llmload_stage_concurrency")
            if level == concurrency and gauges.get("llmload_in_flight_requests", 0) >= concurrency:
                return True
            time.sleep(_POLL_S)
    return False


class UnderLoad:
    """Asks the probes in a thread once the sweep's heaviest stage is full."""

    def __init__(self, metrics_url: str, concurrency: int, ask_them: Callable[[Callable[[], bool]], Answers]):
        self._done = threading.Event()
        self._answers: Answers | None = None

        def run() -> None:
            if wait_full(metrics_url, concurrency, self._done.is_set):
                self._answers = ask_them(self._done.is_set)

        self._thread = threading.Thread(target=run, name="probes-under-load", daemon=True)
        self._thread.start()

    def finish(self, timeout_s: float) -> Answers | None:
        """The answers once the sweep has ended: the probe being asked gets ``timeout_s`` to
        finish, the ones after it are not asked (the load is gone). None when the heaviest stage
        was never seen full."""
        self._done.set()
        self._thread.join(timeout_s)
        return self._answers
