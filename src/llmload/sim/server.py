"""Assembling and running the simulator: one process, one event loop (uvloop when importable).

This module and everything it imports stay free of gevent and Locust: the simulator must run on
an unpatched loop, whatever process started it.
"""

from __future__ import annotations

import asyncio
import signal
import ssl
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import IO, Literal, overload

from llmload.errors import ConfigError
from llmload.sim.api import App
from llmload.sim.clock import DeadlineTimer
from llmload.sim.config import SimConfig
from llmload.sim.engine import BatchEngine, Engine, TimerFactory
from llmload.sim.fixed import FixedEngine
from llmload.sim.http import HttpConnection
from llmload.sim.priority import request_realtime
from llmload.sim.replicas import Replicas
from llmload.sim.router import Router
from llmload.sim.startup import Startup
from llmload.sim.truth import Truth

BACKLOG = 4096  # hundreds of streams connect at once when a benchmark ramps up


def _ssl_context(config: SimConfig) -> ssl.SSLContext | None:
    if config.certfile is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(config.certfile, config.keyfile)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError("--certfile", str(config.certfile), f"cannot load: {exc}") from None
    return context


@overload
def _open(flag: str, path: Path | None, mode: Literal["ab"]) -> IO[bytes] | None: ...
@overload
def _open(flag: str, path: Path | None, mode: Literal["a"]) -> IO[str] | None: ...
def _open(flag: str, path: Path | None, mode: str) -> IO[bytes] | IO[str] | None:
    if path is None:
        return None
    try:
        return path.open(mode)
    except OSError as exc:
        raise ConfigError(flag, str(path), exc.strerror or str(exc)) from None


def _replica(config: SimConfig, truth: Truth, timer: TimerFactory) -> Engine:
    if config.timing is not None:
        return FixedEngine(config.timing, truth, timer)
    return BatchEngine(config.params, truth, timer, adapter_switch_ns=config.adapter_switch_ns)


def _engine(config: SimConfig, truth: Truth, timer: TimerFactory) -> Replicas:
    """The replicas behind their router; one replica is one engine, routed trivially."""
    engines = [_replica(config, truth, timer) for _ in range(config.replicas)]
    return Replicas(engines, Router(config.replicas, config.router))


def _url(config: SimConfig, port: int) -> str:
    host = f"[{config.host}]" if ":" in config.host else config.host
    return f"{config.scheme}://{host}:{port}"


async def serve(config: SimConfig, announce: Callable[[str], None]) -> None:
    """Serve until SIGTERM or SIGINT; ``announce`` gets the listening line once bound."""
    loop = asyncio.get_running_loop()
    if config.realtime:
        refused = request_realtime()
        if refused is not None:
            print(f"llmload sim: --realtime: {refused}; running at normal priority", file=sys.stderr)
    request_log = _open("--request-log", config.request_log, "ab")
    truth = Truth(request_log)
    engine = _engine(config, truth, lambda callback: DeadlineTimer(loop, callback))
    startup = Startup(config.startup_delay_s, config.hang, _open("--log-file", config.log_file, "a"))
    bound = [config.port]
    app = App(config, truth, engine, startup.is_ready, lambda: bound[0])
    try:
        server = await loop.create_server(
            lambda: HttpConnection(app, truth),
            config.host,
            config.port,
            ssl=_ssl_context(config),
            backlog=BACKLOG,
            reuse_address=True,
        )
    except OSError as exc:
        raise ConfigError("--host/--port", f"{config.host}:{config.port}", exc.strerror or str(exc)) from None
    bound[0] = server.sockets[0].getsockname()[1]
    url = _url(config, bound[0])
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    announce(f"llmload sim listening on {url}")
    loading = loop.create_task(startup.run(url))
    try:
        await stop.wait()
    finally:
        loading.cancel()
        server.close()
        engine.close()
        startup.close()
        if request_log is not None:
            request_log.close()


def run_loop(main: Coroutine[object, object, None]) -> None:
    """Run ``main`` on uvloop when it is importable, else on asyncio's default loop."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    uvloop.run(main)


def announce_stdout(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
