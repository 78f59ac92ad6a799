"""Locust's run, steered from inside one: whether it is headless, the next web UI swarm's
config, ending it early or hurrying its end, Ctrl+C in the main greenlet, its exit code on
error and its user counts. Shared by every role."""

from __future__ import annotations

import dataclasses
import signal
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import gevent
import greenlet

from llmload.config.settings import RunConfig
from llmload.locust.env import runner_of

if TYPE_CHECKING:  # importing locust patches the process: the roles leave that to the plugin
    from locust.env import Environment


def headless(environment: Environment) -> bool:
    return environment.parsed_options is None or bool(environment.parsed_options.headless)


def next_run(config: RunConfig, number: int) -> RunConfig:
    """The config of a process's ``number``-th run: a ``--run-id`` given once names the first,
    later ones get ``-2``, ``-3``, ... so no run overwrites another."""
    if config.run_id is None or number == 1:
        return config
    return dataclasses.replace(config, run_id=f"{config.run_id}-{number}")


def stop_run(environment: Environment) -> None:
    """End the run from inside it (the first requests all failed): as when its time is up."""
    runner = runner_of(environment)
    gevent.spawn(runner.quit if headless(environment) else runner.stop)


def hurry(environment: Environment) -> None:
    """An interrupted run stops now: its in-flight requests are recorded as unfinished instead
    of being given the drain's minutes to finish."""
    environment.stop_timeout = 0


def sigint_to_main() -> None:
    """Ctrl+C raises KeyboardInterrupt in the process's main greenlet only.

    Python raises it in whichever greenlet runs at that moment: a user's (a terminal signals
    every process of a ``--processes`` run at once) or one of the web UI's, waiting on a
    browser's keep-alive connection; gevent prints that greenlet's traceback before passing the
    interrupt on to the main greenlet. Raised there directly, Locust's own shutdown follows as
    before, without the traceback.
    """
    main = gevent.get_hub().parent

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        if greenlet.getcurrent() is main:
            raise KeyboardInterrupt
        main.throw(KeyboardInterrupt)

    signal.signal(signal.SIGINT, on_sigint)


def exit_code_on_error(environment: Environment) -> int:
    """Locust's own code for "requests failed" (``--exit-code-on-error``; its default is ours)."""
    return int(getattr(environment.parsed_options, "exit_code_on_error", 1))


def target_users(environment: Environment) -> Callable[[], int]:
    """The user count asked for now: a web UI edit of a running test changes it at once."""
    runner = runner_of(environment)
    return lambda: int(runner.target_user_count)


def running_users(environment: Environment) -> Callable[[], int]:
    """The users Locust runs now (the exporter's ``llmload_users``)."""
    runner = runner_of(environment)
    return lambda: int(runner.user_count)
