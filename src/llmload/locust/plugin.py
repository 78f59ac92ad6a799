"""Wires llmload into Locust's events. Each locustfile calls ``install(events)``.

The process's role (local, master or worker: see ``roles.py``) is decided at ``init`` from
Locust's runner; every later event is forwarded to it.
"""

from __future__ import annotations

import gc
import logging
import secrets
import sys

from locust.env import Environment
from locust.event import Events
from locust.runners import MasterRunner, Runner, WorkerRunner
from locust.web import WebUI

from llmload.config.args import add_options, to_config
from llmload.config.settings import RunConfig
from llmload.errors import LlmloadError
from llmload.locust.control import headless
from llmload.locust.env import listen
from llmload.locust.limits import check_local, check_master
from llmload.locust.master import MasterRole
from llmload.locust.plans import check_stage_options
from llmload.locust.roles import LocalRole, WorkerRole
from llmload.locust.webui import install_tabs
from llmload.run.conductor import Conductor
from llmload.run.process_run import ProcessRun

_ROLE = "llmload_role"
_INSTALLED = "llmload_installed"
Role = LocalRole | MasterRole | WorkerRole


def role_of(environment: Environment) -> Role:
    role: Role | None = getattr(environment, _ROLE, None)
    if role is None:
        raise RuntimeError("llmload is not installed: call llmload.locust.install(events) in the locustfile")
    return role


def session_of(environment: Environment) -> ProcessRun:
    role = role_of(environment)
    if isinstance(role, MasterRole) or role.session is None:
        raise RuntimeError("this process runs no users")
    return role.session


def conductor_of(environment: Environment) -> Conductor:
    role = role_of(environment)
    if isinstance(role, WorkerRole):
        raise RuntimeError("workers do not conduct stages")
    return role.conductor


def _fatal(exc: LlmloadError, *, forked: bool = False) -> None:
    # A user error before the run: one clear line and a non-zero exit, no traceback.
    print(f"llmload: {exc}", file=sys.stderr, flush=True)
    if forked:
        _end_forked_workers()
    raise SystemExit(exc.exit_code)


def _end_forked_workers() -> None:
    """``--processes`` forks the workers before ``init``, and Locust's exit handler takes a
    running child for one that exited (``kill_workers`` reads WNOHANG's ``(0, 0)`` as a status)
    and never signals it: a master that stops at ``init`` would leave them waiting a minute for
    its heartbeat, holding the terminal. They have no users yet: SIGTERM ends them."""
    import psutil

    for child in psutil.Process().children():
        child.terminate()


def _config(environment: Environment, *, new_salt: bool = False) -> RunConfig:
    opts = environment.parsed_options
    assert opts is not None, "llmload's roles exist only in a Locust started from its command line"
    if new_salt or not getattr(opts, "salt", None):
        # One per run, chosen where the run is conducted; workers receive it with the
        # master's options, so the whole fleet salts alike.
        opts.salt = secrets.token_hex(4)
    classes = environment.user_classes
    scenario = "+".join(sorted({getattr(u, "scenario", u.__name__) for u in classes}))
    return to_config(opts, scenario=scenario, host=environment.host)


# The loggers of the control plane's HTTP clients: at INFO httpx writes a line per call, and a
# fingerprint's 404s for the engines a server is not ("GET /props 404 Not Found") read as errors.
_CONTROL_LOGGERS = ("httpx", "httpcore")


def _quiet_control_plane(loglevel: str) -> None:
    """llmload's own HTTP calls stay quiet unless the run asked for DEBUG (``--loglevel``)."""
    level = logging.DEBUG if loglevel.upper() == "DEBUG" else logging.WARNING
    for name in _CONTROL_LOGGERS:
        logging.getLogger(name).setLevel(level)


def _on_init(
    environment: Environment, runner: Runner | None = None, web_ui: WebUI | None = None, **_kw: object
) -> None:
    if environment.parsed_options is None:
        return
    _quiet_control_plane(str(getattr(environment.parsed_options, "loglevel", "INFO")))
    try:
        if isinstance(runner, WorkerRunner):
            role: Role = WorkerRole(environment, runner)  # its config arrives with the master's options
        else:
            salt_given = bool(getattr(environment.parsed_options, "salt", None))
            config = _config(environment)
            check_stage_options(environment, config)
            if headless(environment):  # a web UI swarm's users are known only once it starts
                master = isinstance(runner, MasterRunner)
                (check_master if master else check_local)(environment, config)
            if not environment.parsed_options.stop_timeout:
                # Let in-flight requests finish at the end (the drain) instead of killing them.
                environment.stop_timeout = config.phases.drain_s

            # A later web UI swarm reads the start form's options, with a salt of its own.
            def configure() -> RunConfig:
                return _config(environment, new_salt=not salt_given)

            role = (
                MasterRole(environment, runner, config, configure)
                if isinstance(runner, MasterRunner)
                else LocalRole(environment, config, configure)
            )
    except LlmloadError as exc:
        _fatal(exc, forked=isinstance(runner, MasterRunner) and bool(environment.parsed_options.processes))
        return
    setattr(environment, _ROLE, role)
    if web_ui is not None and not isinstance(role, WorkerRole):
        install_tabs(web_ui, lambda: role.live, lambda: role.finished)

    def on_quitting(**_kw: object) -> None:
        # Locust fires ``quitting`` first thing in its shutdown. A run that ends by itself (its
        # time, its shape, a fail-fast stop) has concluded by then; one that has not is being
        # interrupted: SIGINT and SIGTERM both lead here, except a SIGINT to a sweep, whose
        # KeyboardInterrupt Locust catches and ends like a finished shape (Conductor.cut_short).
        if runner is not None and runner.state not in ("ready", "stopped"):
            role.interrupt()

    def on_quit(exit_code: int = 0, **_kw: object) -> None:
        # Locust's ``quit`` comes after its own tables: ours stays the last thing on screen.
        if role.final_text:
            print(role.final_text, flush=True)
        role.after_quit()
        if role.exit_code is not None and role.exit_code != exit_code:
            # On SIGTERM Locust picks its exit code before it stops the run we judge.
            raise SystemExit(role.exit_code)

    listen(environment.events.quitting, on_quitting)
    listen(environment.events.quit, on_quit)


def _on_test_start(environment: Environment, **_kw: object) -> None:
    role = role_of(environment)
    try:
        if isinstance(role, WorkerRole):
            role.start(_config(environment))
        else:
            role.test_start()
    except LlmloadError as exc:
        role.refuse(exc)  # its summary says why it could not start; a worker tells the master
        _fatal(exc)
        return
    # What is alive once the run is set up (the modules, Locust, the config, the prompts) lives
    # to the end. A full collection walks every object the collector tracks, here 65,000 in
    # 15-50 ms with the loop stopped: one inside a window would stamp every stream's next read
    # that late. Frozen, they are not walked again, and a full collection during the run takes
    # under a millisecond (docs/pitfalls.md, "A full garbage collection"; bench/gc_pause.py).
    gc.collect()
    gc.freeze()


def _on_test_stopping(environment: Environment, **_kw: object) -> None:
    role = role_of(environment)
    if not isinstance(role, WorkerRole):
        role.test_stopping()


def _on_test_stop(environment: Environment, **_kw: object) -> None:
    role_of(environment).test_stop()


def install(events: Events) -> None:
    """Register llmload's options and listeners on Locust's event hooks. Once: a locustfile
    that imports another (its tools, its users) installs again, and that changes nothing."""
    if getattr(events, _INSTALLED, False):
        return
    setattr(events, _INSTALLED, True)
    listen(events.init_command_line_parser, add_options)
    listen(events.init, _on_init)
    listen(events.test_start, _on_test_start)
    listen(events.test_stopping, _on_test_stopping)
    listen(events.test_stop, _on_test_stop)
