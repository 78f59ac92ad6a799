"""A real Prometheus server for tests, and independent recounts of the exported histograms.

``PrometheusServer`` runs Debian's ``prometheus`` binary on 127.0.0.1 with a temporary config
(scraping the given targets every second) and TSDB, waits until it is ready, answers PromQL
queries over its HTTP API, and stops it. ``recount`` counts samples at or below each ``le`` of a
histogram straight from ``requests.jsonl`` lines, through ``derive`` but not through
``ClassicStats``: it is the check, not a second copy of the code under test.
"""

from __future__ import annotations

import contextlib
import json
import random
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from llmload.core.phases import Phase
from llmload.core.record import Outcome, RequestRecord, TokenSource
from llmload.metrics import derive

PROMETHEUS = shutil.which("prometheus")
PROMTOOL = shutil.which("promtool")
MS = 1_000_000
MISSING = "Debian's prometheus package is not installed: run scripts/install-test-deps.sh as root"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class PrometheusServer:
    """One Prometheus process scraping ``targets`` (``host:port``) every ``interval``."""

    def __init__(
        self,
        workdir: Path,
        targets: Mapping[str, Sequence[str]],
        interval: str = "1s",
        rule_files: Sequence[Path] = (),
    ) -> None:
        assert PROMETHEUS is not None, MISSING
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = {
            "global": {"scrape_interval": interval, "evaluation_interval": interval},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [
                {"job_name": job, "static_configs": [{"targets": list(hosts)}]}
                for job, hosts in targets.items()
            ],
        }
        # JSON is YAML: no YAML library needed to write the config.
        (workdir / "prometheus.yml").write_text(json.dumps(config))
        self.log = (workdir / "prometheus.log").open("wb")
        self.proc = subprocess.Popen(
            [
                PROMETHEUS,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        self._wait_ready()

    def _wait_ready(self, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited: {self.proc.returncode}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as resp,
            ):
                if resp.status == 200:
                    return
            time.sleep(0.1)
        raise TimeoutError("prometheus not ready")

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=30) as resp:
            body = json.load(resp)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": expr} if at is None else {"query": expr, "time": f"{at:.3f}"}
        data = self.api("query", **params)
        result: list[dict[str, Any]] = (
            data["result"] if data["resultType"] == "vector" else [{"metric": {}, "value": data["result"]}]
        )
        return result

    def samples(self, selector: str, at: float, window_s: int) -> list[tuple[float, float]]:
        """Raw ``(timestamp, value)`` samples of one series in ``window_s`` before ``at``."""
        data = self.api("query", query=f"{selector}[{window_s}s]", time=f"{at:.3f}")
        assert len(data["result"]) == 1, data["result"]
        return [(float(t), float(v)) for t, v in data["result"][0]["values"]]

    def wait_for(
        self, expr: str, check: Callable[[list[dict[str, Any]]], bool], timeout_s: float = 30
    ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.query(expr)
            if check(result) or time.monotonic() > deadline:
                return result
            time.sleep(0.25)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@contextlib.contextmanager
def running_prometheus(
    workdir: Path, targets: Mapping[str, Sequence[str]], rule_files: Sequence[Path] = ()
) -> Iterator[PrometheusServer]:
    server = PrometheusServer(workdir, targets, rule_files=rule_files)
    try:
        yield server
    finally:
        server.stop()


def record_from_json(d: Mapping[str, Any]) -> RequestRecord:
    """A ``requests.jsonl`` line back into the record it was written from."""
    r = RequestRecord(
        d["id"],
        d["user"],
        d["stage"],
        Phase(d["phase"]),
        d["endpoint"],
        d["stream"],
        scheduled_ns=d["scheduled_ns"],
    )
    for name in (
        "prompt_tokens_requested",
        "max_tokens",
        "connect_start_ns",
        "connected_ns",
        "sent_ns",
        "headers_ns",
        "first_token_ns",
        "first_output_ns",
        "last_token_ns",
        "done_ns",
        "status",
        "finish_reason",
        "output_tokens",
        "prompt_tokens",
        "events",
        "reads",
    ):
        setattr(r, name, d[name])
    r.outcome, r.error_detail = Outcome(d["outcome"]), d["error"]
    r.token_source = TokenSource(d["token_source"])
    r.event_ns, r.event_tokens = array("q", d["event_ns"]), array("l", d["event_tokens"])
    return r


def _samples(r: RequestRecord, source: str) -> list[tuple[float, int]]:
    """``(value, times)`` of one sample stream of one ok record, as docs/metrics.md defines it."""
    tpot = derive.tpot_ns(r)
    single: dict[str, float | int | None] = {
        "ttft": derive.ttft_ns(r),
        "ttfot": derive.ttfot_ns(r),
        "e2e": derive.e2e_ns(r),
        "queue": derive.queue_ns(r),
        "tpot": None if tpot is None else round(tpot),
        "prompt_tokens": r.prompt_tokens,
        "generation_tokens": r.output_tokens,
    }
    if source in single:
        value = single[source]
        return [] if value is None else [(value, 1)]
    if source == "itl":
        return [(float(v), n) for v, n in derive.itl_samples(r)]
    if source == "chunk_gap":
        return [(float(v), 1) for v in derive.chunk_gaps(r)]
    assert source == "tokens_per_event", source
    return [(float(t), 1) for t in r.event_tokens[1:]]


def recount(records: Sequence[RequestRecord], source: str, les: Sequence[float], seconds: bool) -> list[int]:
    """How many samples of ``source`` are ≤ each ``le`` (seconds if ``seconds``); +Inf last.

    Compared in the samples' own unit (int ns), so no float rounding decides a boundary case.
    """
    bounds = [round(le * 1e9) if seconds else le for le in les]
    values: list[tuple[float, int]] = []
    for r in records:
        if r.ok:
            values += _samples(r, source)
    return [sum(n for v, n in values if v <= b) for b in bounds] + [sum(n for _, n in values)]


def synthetic_records(rng: random.Random, n: int, stage: int = 0) -> list[RequestRecord]:
    """Plausible finished records: mixed outcomes, coalesced reads, boundary-exact gaps."""
    out = []
    for i in range(n):
        sent = i * 50 * MS
        r = RequestRecord(
            f"r{i}",
            f"u{i % 7}",
            stage,
            rng.choice(list(Phase)),
            "chat",
            True,
            scheduled_ns=sent - rng.choice((0, 0, 3 * MS)),
            sent_ns=sent,
        )
        t = sent + rng.choice((10 * MS, 20 * MS, 40 * MS, rng.randrange(1, 3000) * MS // 7))
        stamps, tokens = [], []
        for _ in range(rng.randrange(1, 40)):
            for _ in range(rng.choice((1, 1, 1, 2, 3))):  # events completed by one read
                stamps.append(t)
                tokens.append(rng.choice((1, 1, 1, 2, 4)))
            t += rng.choice((100_000, 6 * MS, 10 * MS, 25 * MS, rng.randrange(1, 100_000_000)))
        r.event_ns, r.event_tokens = array("q", stamps), array("l", tokens)
        r.first_token_ns, r.last_token_ns, r.done_ns = stamps[0], stamps[-1], t
        r.first_output_ns = stamps[min(1, len(stamps) - 1)]
        r.output_tokens, r.prompt_tokens = sum(tokens), rng.choice((None, 17, 200, 5000))
        r.outcome = Outcome(rng.choice(("ok", "ok", "ok", "http_5xx", "stall_timeout", "unfinished")))
        out.append(r)
    return out


REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "exporters" / "grafana" / "llmload.json"
RULES = REPO / "exporters" / "prometheus" / "rules.yml"


def dashboard_queries(path: Path = DASHBOARD) -> list[tuple[str, str]]:
    """``(panel title, expr)`` of every target of every panel."""
    data = json.loads(path.read_text())
    return [(p["title"], t["expr"]) for p in data["panels"] for t in p.get("targets", [])]


def substitute(expr: str, variables: Mapping[str, str]) -> str:
    """Grafana's variable interpolation, for the few variables the dashboard uses."""
    for name in sorted(variables, key=len, reverse=True):  # $__rate_interval before $run_id...
        expr = expr.replace(f"${name}", variables[name])
    assert "$" not in expr, expr
    return expr
