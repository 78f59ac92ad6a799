"""The final push: PUT then DELETE of one group; an unreachable Pushgateway is one warning line.

No Pushgateway binary is installed here, so a small recording HTTP server on 127.0.0.1 stands in
for it: the bytes on the wire are still prometheus_client's real push protocol.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llmload.config.settings import ExporterConfig
from llmload.export.prometheus import exposition, make_registry, start_exporter
from llmload.export.pushgateway import JOB, delete_group, finish, push_final
from tests.support.prometheus import free_port
from tests.unit.export.test_prometheus import FakeSource


class Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, bytes]]

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.seen.append((self.command, self.path, self.rfile.read(length)))
        self.send_response(500 if "fail" in self.path else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_POST = do_DELETE = _record

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def gateway() -> Iterator[tuple[str, list[tuple[str, str, bytes]]]]:
    seen: list[tuple[str, str, bytes]] = []
    handler = type("Handler", (Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()
    thread.join()


def test_push_and_delete_one_group(gateway: tuple[str, list[tuple[str, str, bytes]]]) -> None:
    url, seen = gateway
    source = FakeSource()
    assert push_final(url, JOB, {"run_id": "run-1"}, make_registry(source))
    assert delete_group(url, JOB, {"run_id": "run-1"})
    assert [(m, p) for m, p, _ in seen] == [
        ("PUT", "/metrics/job/llmload/run_id/run-1"),
        ("DELETE", "/metrics/job/llmload/run_id/run-1"),
    ]
    assert seen[0][2] == exposition(source)


def test_errors_are_one_warning_never_a_crash(
    caplog: pytest.LogCaptureFixture, gateway: tuple[str, list[tuple[str, str, bytes]]]
) -> None:
    url, _seen = gateway
    registry = make_registry(FakeSource())
    with caplog.at_level(logging.WARNING):
        assert not push_final(f"http://127.0.0.1:{free_port()}", JOB, {"run_id": "r"}, registry)
        assert not push_final(url, JOB, {"run_id": "fail"}, registry)  # HTTP 500
        assert not delete_group(f"http://127.0.0.1:{free_port()}", JOB, {"run_id": "r"})
    assert len(caplog.records) == 3
    assert all(len(r.getMessage().splitlines()) == 1 for r in caplog.records)


def test_finish_pushes_lingers_deletes_and_closes(gateway: tuple[str, list[tuple[str, str, bytes]]]) -> None:
    url, seen = gateway
    config = ExporterConfig(port=0, linger_s=2.5, pushgateway_url=url, pushgateway_delete=True)
    handle = start_exporter(config, FakeSource())
    slept: list[float] = []
    finish(config, handle, "run-9", sleep=slept.append)
    assert slept == [2.5]
    assert [m for m, _, _ in seen] == ["PUT", "DELETE"]
    assert not handle.thread.is_alive()


def test_finish_without_a_gateway_only_closes() -> None:
    handle = start_exporter(ExporterConfig(port=0), FakeSource())
    finish(ExporterConfig(port=0), handle, "run", sleep=lambda s: pytest.fail("no linger asked"))
    assert not handle.thread.is_alive()
