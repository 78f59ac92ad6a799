"""Wires llmload into Locust's events. Each locustfile calls ``install(events)``.

The process's role (local, master or worker: see ``roles.py``) is decided at ``init`` from
Locust's runner; every later event is forwarded to it.
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

from locust.runners import MasterRunner, WorkerRunner

from llmload.config.args import add_options, to_config
from llmload.errors import LlmloadError
from llmload.locust.master import MasterRole
from llmload.locust.plans import check_stage_options
from llmload.locust.roles import LocalRole, WorkerRole
from llmload.locust.webui import install_tabs
from llmload.run.conductor import Conductor
from llmload.run.session import Session

_ROLE = "llmload_role"
_INSTALLED = "llmload_installed"
Role = LocalRole | MasterRole | WorkerRole


def role_of(environment: Any) -> Role:
    role: Role | None = getattr(environment, _ROLE, None)
    if role is None:
        raise RuntimeError("llmload is not installed: call llmload.locust.install(events) in the locustfile")
    return role


def session_of(environment: Any) -> Session:
    role = role_of(environment)
    if isinstance(role, MasterRole) or role.session is None:
        raise RuntimeError("this process runs no users")
    return role.session


def conductor_of(environment: Any) -> Conductor:
    role = role_of(environment)
    if isinstance(role, WorkerRole):
        raise RuntimeError("workers do not conduct stages")
    return role.conductor


def _fatal(exc: LlmloadError) -> None:
    # A user error before the run: one clear line and a non-zero exit, no traceback.
    print(f"llmload: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(exc.exit_code)


def _config(environment: Any, *, new_salt: bool = False) -> Any:
    opts = environment.parsed_options
    if new_salt or not getattr(opts, "salt", None):
        # One per run, chosen where the run is conducted; workers receive it with the
        # master's options, so the whole fleet salts alike.
        opts.salt = secrets.token_hex(4)
    classes = environment.user_classes
    scenario = "+".join(sorted({getattr(u, "scenario", u.__name__) for u in classes}))
    return to_config(environment.parsed_options, scenario=scenario, host=environment.host)


def _on_init(environment: Any, runner: Any = None, web_ui: Any = None, **_kw: Any) -> None:
    if environment.parsed_options is None:
        return
    try:
        if isinstance(runner, WorkerRunner):
            role: Role = WorkerRole(environment)  # its config arrives with the master's options
        else:
            salt_given = bool(getattr(environment.parsed_options, "salt", None))
            config = _config(environment)
            check_stage_options(environment, config)
            if not environment.parsed_options.stop_timeout:
                # Let in-flight requests finish at the end (the drain) instead of killing them.
                environment.stop_timeout = config.phases.drain_s

            # A later web UI swarm reads the start form's options, with a salt of its own.
            def configure() -> Any:
                return _config(environment, new_salt=not salt_given)

            role = (
                MasterRole(environment, config, configure)
                if isinstance(runner, MasterRunner)
                else LocalRole(environment, config, configure)
            )
    except LlmloadError as exc:
        _fatal(exc)
        return
    setattr(environment, _ROLE, role)
    if web_ui is not None and not isinstance(role, WorkerRole):
        install_tabs(web_ui, lambda: role.live, lambda: role.finished)

    def on_quitting(**_kw: Any) -> None:
        # Locust fires ``quitting`` first thing in its shutdown. A run that ends by itself (its
        # time, its shape, a fail-fast stop) has concluded by then; one that has not is being
        # interrupted: SIGINT and SIGTERM both lead here, except a SIGINT to a sweep, whose
        # KeyboardInterrupt Locust catches and ends like a finished shape (Conductor.cut_short).
        if runner is not None and runner.state not in ("ready", "stopped"):
            role.interrupt()

    def on_quit(exit_code: int = 0, **_kw: Any) -> None:
        # Locust's ``quit`` comes after its own tables: ours stays the last thing on screen.
        if role.final_text:
            print(role.final_text, flush=True)
        role.after_quit()
        if role.exit_code is not None and role.exit_code != exit_code:
            # On SIGTERM Locust picks its exit code before it stops the run we judge.
            raise SystemExit(role.exit_code)

    environment.events.quitting.add_listener(on_quitting)
    environment.events.quit.add_listener(on_quit)


def _on_test_start(environment: Any, **_kw: Any) -> None:
    role = role_of(environment)
    try:
        if isinstance(role, WorkerRole):
            role.start(_config(environment))
        else:
            role.test_start()
    except LlmloadError as exc:
        _fatal(exc)


def _on_test_stopping(environment: Any, **_kw: Any) -> None:
    role = role_of(environment)
    if not isinstance(role, WorkerRole):
        role.test_stopping()


def _on_test_stop(environment: Any, **_kw: Any) -> None:
    role_of(environment).test_stop()


def install(events: Any) -> None:
    """Register llmload's options and listeners on Locust's event hooks. Once: a locustfile
    that imports another (its tools, its users) installs again, and that changes nothing."""
    if getattr(events, _INSTALLED, False):
        return
    setattr(events, _INSTALLED, True)
    events.init_command_line_parser.add_listener(add_options)
    events.init.add_listener(_on_init)
    events.test_start.add_listener(_on_test_start)
    events.test_stopping.add_listener(_on_test_stopping)
    events.test_stop.add_listener(_on_test_stop)
