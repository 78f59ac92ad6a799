"""The quality guard's probes against the real simulator: greedy answers that repeat, a server
that is not there, and the wait for a sweep's heaviest stage read off a real exporter socket."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from llmload.sim.process import start_sim
from llmload.target.models import first_model
from llmload.target.probes import Answers, UnderLoad, ask, wait_full

pytestmark = pytest.mark.integration

PROMPTS = ("What is 17 * 23?", "Name the capital of France.", "List three primes.")


def test_probes_are_answered_the_same_twice_and_by_any_drafter() -> None:
    with start_sim([]) as plain, start_sim(["--profile", "vllm-eagle3"]) as eagle:
        model = first_model(plain.url, api_key=None)
        first = ask(plain.url, PROMPTS, model=model, max_tokens=8, headers={})
        again = ask(plain.url, PROMPTS, model=model, max_tokens=8, headers={})
        drafted = ask(eagle.url, PROMPTS, model=model, max_tokens=8, headers={})
    assert first.errors == () and all(first.texts)
    assert first.texts == again.texts == drafted.texts  # the sim's answer is its prompt's
    assert len(set(first.texts)) == len(PROMPTS)


def test_a_server_that_is_not_there_leaves_every_probe_unanswered() -> None:
    answers = ask("http://127.0.0.1:9", PROMPTS, model="m", max_tokens=8, headers={}, timeout_s=2)
    assert answers.texts == (None, None, None)
    assert len(answers.errors) == 3 and "ConnectError" in answers.errors[0]


class _Exporter(BaseHTTPRequestHandler):
    gauges: ClassVar[dict[str, float]] = {"stage": 0.0, "in_flight": 0.0}

    def do_GET(self) -> None:
        g = self.gauges
        body = (
            '# TYPE llmload_stage_concurrency gauge\nllmload_stage_concurrency{target="t",model="m"} '
            f"{g['stage']}\n# TYPE llmload_in_flight_requests gauge\n"
            f'llmload_in_flight_requests{{target="t",model="m"}} {g["in_flight"]}\n'
        ).encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def exporter() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    server.shutdown()
    server.server_close()


def test_probes_wait_for_the_heaviest_stage_to_fill(exporter: str) -> None:
    _Exporter.gauges.update(stage=2, in_flight=2)
    asked = threading.Event()

    def ask_them(stopped: Callable[[], bool]) -> Answers:
        asked.set()
        return Answers(("answer",))

    guard = UnderLoad(exporter, 4, ask_them)
    assert not asked.wait(1.5)  # C=2 is not the heaviest stage
    _Exporter.gauges.update(stage=4, in_flight=3)
    assert not asked.wait(1.5)  # the heaviest stage, not full yet
    _Exporter.gauges.update(in_flight=4)
    assert asked.wait(10)
    finished = guard.finish(10)
    assert finished is not None and finished.texts == ("answer",)
    # a sweep that ends before its heaviest stage fills: no answers, and no waiting for them
    started = time.monotonic()
    assert not wait_full(exporter, 8, lambda: time.monotonic() - started > 1.0)
    assert UnderLoad(exporter, 8, ask_them).finish(5) is None
