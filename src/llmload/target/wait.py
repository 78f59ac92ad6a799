"""``llmload wait``: wait until a server can generate, or until it is clear it never will.

Ready means exactly this: a one-token, non-streaming chat completion succeeded, because servers
list their model (or answer ``/health``) before they can generate. Given the server's log, the
time since the file last changed tells slow loading from a hang. docs/wait.md describes the states
shown, the exit codes and how the stall is counted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import TextIO

import httpx

from llmload.config.apikey import read_api_key
from llmload.config.commands import declare
from llmload.core.redact import redact_text
from llmload.errors import ConfigError
from llmload.results.exitcodes import ExitCode
from llmload.target.fingerprint import auth_headers, base_url
from llmload.target.models import refused

PROGRESS_EVERY_S = 10.0  # an unchanged state is repeated this often, so a long wait shows life
_CONNECT_S = 3.0
_ANSWER_S = 30.0  # the first generation after loading may be slow (warm-up, compilation)
_TAIL_BYTES = 4096
UNAUTHORIZED = "unauthorized"  # the one state that ends the wait at once: a key will not appear


class WaitCode(IntEnum):
    """Exit codes of ``llmload wait``: rows of the one table in ``llmload.results.exitcodes``."""

    READY = ExitCode.OK
    USAGE_ERROR = ExitCode.COULD_NOT_START
    REFUSED = ExitCode.COULD_NOT_START  # 401/403: no key or a wrong one; waiting cannot help
    TIMEOUT_WHILE_LOG_MOVING = ExitCode.WAIT_TIMEOUT  # slow loading; also without a log
    LOG_STALLED = ExitCode.LOG_STALLED  # likely hung
    SERVER_EXITED = ExitCode.COULD_NOT_START  # the server process we were given ended (llmload tune)


@dataclass(frozen=True, slots=True)
class WaitResult:
    code: WaitCode
    state: str  # the last state seen
    elapsed_s: float
    message: str
    transitions: tuple[tuple[float, str], ...]  # (elapsed_s, state) at every change of state
    log_line: str | None = None
    log_age_s: float | None = None


@dataclass(frozen=True, slots=True)
class _Seen:
    state: str
    detail: str


def _why(response: httpx.Response) -> str:
    """A short reason from an error answer: OpenAI-style ``error.message``, or the body's start."""
    try:
        message = response.json()["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = None
    return redact_text(str(message or response.text[:80] or response.reason_phrase).strip())


def _transport(exc: httpx.HTTPError, timeout_s: float) -> _Seen:
    if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, httpx.ConnectTimeout):
        return _Seen("no_answer", f"connected, no answer within {timeout_s:.1f} s")
    return _Seen("refused", f"{type(exc).__name__}: {redact_text(str(exc))}")  # refused, reset


def _models(response: httpx.Response, api_key: str | None) -> tuple[_Seen, list[str]]:
    """What ``GET /v1/models`` says, and the model ids it lists."""
    why = refused(response.status_code, api_key)
    if why:
        return _Seen(UNAUTHORIZED, f"GET /v1/models: {why}"), []
    if response.status_code != 200:
        return _Seen(f"http_{response.status_code}", f"GET /v1/models: {_why(response)}"), []
    try:
        listed = [str(m["id"]) for m in response.json()["data"]]
    except (ValueError, KeyError, TypeError):
        return _Seen("http_200", "GET /v1/models did not answer an OpenAI model list"), []
    if not listed:
        return _Seen("no_models", "GET /v1/models lists no model"), []
    return _Seen("models_listed", f"{listed[0]} listed"), listed


def probe(client: httpx.Client, url: str, model: str | None, api_key: str | None, timeout_s: float) -> _Seen:
    """One look at the server: list the models, then try a one-token generation."""
    timeout = httpx.Timeout(timeout_s, connect=min(_CONNECT_S, timeout_s))
    headers = auth_headers(api_key)
    try:
        before, listed = _models(client.get(url + "/v1/models", headers=headers, timeout=timeout), api_key)
    except httpx.HTTPError as exc:
        return _transport(exc, timeout_s)
    name = model or (listed[0] if listed else None)
    if name is None or before.state == UNAUTHORIZED:
        return before
    body = {
        "model": name,
        "messages": [{"role": "user", "content": "Say OK."}],
        "max_tokens": 1,
        "stream": False,
    }
    try:
        answer = client.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=timeout)
        generated = answer.status_code == 200 and isinstance(answer.json()["choices"], list)
    except httpx.HTTPError as exc:
        return _Seen(before.state, f"{before.detail}; generation: {_transport(exc, timeout_s).detail}")
    except (ValueError, KeyError, TypeError):
        generated = False
    if generated:
        return _Seen("ready", f"{name} generated a token")
    why = refused(answer.status_code, api_key)
    if why:
        return _Seen(UNAUTHORIZED, f"generation: {why}")
    return _Seen(before.state, f"{before.detail}; generation: HTTP {answer.status_code} {_why(answer)}")


def _newest_line(path: Path) -> str:
    with path.open("rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL_BYTES))
        tail = f.read().decode("utf-8", errors="replace")
    # Progress bars redraw with \r: the text after the last one is what a terminal shows.
    lines = [line.strip() for line in tail.replace("\r", "\n").split("\n") if line.strip()]
    newest = lines[-1] if lines else ""
    return newest if len(newest) <= 100 else newest[:97] + "..."  # one terminal line


@dataclass
class _LogWatch:
    """The log's newest line and when it last changed (size or mtime), on the wait's clock."""

    path: Path
    changed_at: float = 0.0  # the start of the wait until a change is seen
    line: str = ""
    looked: bool = False
    signature: tuple[int, int] | None = None  # (size, mtime_ns); None: no such file

    def look(self, now: float) -> None:
        try:
            stat = self.path.stat()
            signature: tuple[int, int] | None = (stat.st_size, stat.st_mtime_ns)
            self.line = _newest_line(self.path)
        except OSError:
            signature, self.line = None, f"({self.path} does not exist)"
        if self.looked and signature != self.signature:
            self.changed_at = now
        self.looked, self.signature = True, signature

    def age(self, now: float) -> float:
        return now - self.changed_at


@dataclass
class _Session:
    """One wait's moving parts: the loop's state lives here, never in the module."""

    url: str
    client: httpx.Client
    out: TextIO
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    log: _LogWatch | None
    model: str | None
    api_key: str | None
    exited: Callable[[], int | None]
    start: float = 0.0
    transitions: list[tuple[float, str]] = field(default_factory=list)
    shown_at: float = -PROGRESS_EVERY_S

    def show(self, now: float, seen: _Seen) -> None:
        changed = not self.transitions or self.transitions[-1][1] != seen.state
        if changed:
            self.transitions.append((now, seen.state))
        if changed or now - self.shown_at >= PROGRESS_EVERY_S:
            text = f"[{now:7.1f} s] {seen.state:<13} {seen.detail}"
            if self.log is not None:
                text += f" | log {self.log.age(now):.0f} s ago: {self.log.line}"
            print(text, file=self.out, flush=True)
            self.shown_at = now

    def result(self, code: WaitCode, now: float, seen: _Seen, message: str) -> WaitResult:
        print(f"llmload wait: {message}", file=self.out, flush=True)
        log = self.log
        return WaitResult(
            code,
            seen.state,
            now,
            message,
            tuple(self.transitions),
            log.line if log else None,
            log.age(now) if log else None,
        )

    def run(self, timeout_s: float, stall_s: float | None, interval_s: float) -> WaitResult:
        log = self.log if stall_s is not None else None  # the log that can end the wait
        stall = stall_s or 0.0
        while True:
            now = self.clock() - self.start
            # A probe never outlasts the wait, nor the moment the log would count as stalled.
            budget = min(_ANSWER_S, timeout_s - now, *([stall - log.age(now)] if log else []))
            seen = probe(self.client, self.url, self.model, self.api_key, max(0.5, budget))
            now = self.clock() - self.start
            if self.log is not None:
                self.log.look(now)
            self.show(now, seen)
            if seen.state == "ready":
                return self.result(WaitCode.READY, now, seen, f"ready after {now:.1f} s ({seen.detail})")
            if (code := self.exited()) is not None:
                return self.result(
                    WaitCode.SERVER_EXITED,
                    now,
                    seen,
                    f"the server exited with {code} (last seen: {seen.state})",
                )
            if seen.state == UNAUTHORIZED:
                return self.result(WaitCode.REFUSED, now, seen, f"the server refused: {seen.detail}")
            if log is not None and log.age(now) >= stall:
                why = f"the log has not changed for {log.age(now):.0f} s while the server is {seen.state}"
                return self.result(
                    WaitCode.LOG_STALLED, now, seen, f"{why}: likely hung (newest line: {log.line!r})"
                )
            if now >= timeout_s:
                moving = ""
                if self.log is not None:
                    age = self.log.age(now)
                    moving = f"; the log last changed {age:.0f} s ago: slow loading? raise --wait-timeout"
                message = f"timed out after {now:.0f} s, still {seen.state} ({seen.detail}){moving}"
                return self.result(WaitCode.TIMEOUT_WHILE_LOG_MOVING, now, seen, message)
            self.sleep(max(0.0, min(interval_s, timeout_s - now)))


def wait_ready(
    host: str,
    *,
    timeout_s: float = 900,
    log_file: str | None = None,
    log_stall_s: float | None = None,
    api_key: str | None = None,
    model: str | None = None,
    interval_s: float = 1.0,
    out: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    client: httpx.Client | None = None,
    exited: Callable[[], int | None] = lambda: None,
) -> WaitResult:
    """Poll until the server generates (READY), the log stalls (LOG_STALLED), time runs out or
    the server's process, where ``exited`` watches one, ends (SERVER_EXITED)."""
    if log_stall_s is not None and log_file is None:
        raise ConfigError("--log-stall", log_stall_s, "needs --log FILE: the stall is the log's")
    url = base_url(host)
    http = client if client is not None else httpx.Client(timeout=_ANSWER_S)
    log = _LogWatch(Path(log_file)) if log_file else None
    session = _Session(url, http, out or sys.stdout, clock, sleep, log, model, api_key, exited, clock())
    try:
        return session.run(timeout_s, log_stall_s, interval_s)
    finally:
        if client is None:
            http.close()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload wait",
        description="Wait until a server can "
        "generate (exit 0), for at most --wait-timeout (then exit 6), or until "
        "--log stops changing for --log-stall seconds (exit 7). Usage "
        "errors, and a server that refuses the key (HTTP 401/403), exit 2 "
        "at once. The API key comes from the variable --api-key-env names.",
    )
    # the sweep's declarations: a flag means the same to every command (--timeout: an alias)
    declare(p, "--host", "--wait-timeout", "--log", "--log-stall", "--model", "--api-key-env")
    return p


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(list(argv))
        if not args.host:  # the sweep's --host is one of two targets, so the table cannot require it
            parser.error("--host is required: the server's base URL, e.g. http://gpu-box:8000")
    except SystemExit as exc:  # argparse exits on --help (0) and on bad usage (2)
        return exc.code if isinstance(exc.code, int) else int(WaitCode.USAGE_ERROR)
    for flag, value in (("--wait-timeout", args.wait_timeout), ("--log-stall", args.log_stall)):
        if value is not None and not value > 0:
            raise ConfigError(flag, value, "must be > 0")
    api_key = read_api_key(args.api_key_env, os.environ)
    return int(
        wait_ready(
            args.host,
            timeout_s=args.wait_timeout,
            log_file=args.log,
            log_stall_s=args.log_stall,
            api_key=api_key,
            model=args.model,
        ).code
    )
