"""Locust's environment as the adapter reads it, typed.

Locust types ``runner`` and ``parsed_options`` as optional (an Environment built in a test has
neither), and leaves ``add_listener`` untyped; llmload's roles exist only in a Locust started from
its command line, where both are set before ``init`` fires. These say so once, instead of at
every use.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing locust patches the process: leave that to the plugin
    from locust.env import Environment
    from locust.event import EventHook
    from locust.runners import Runner


def options_of(environment: Environment) -> argparse.Namespace:
    """Locust's parsed options (a web UI swarm's form rewrites them in place: read them when
    needed, not once)."""
    options: argparse.Namespace | None = environment.parsed_options  # configargparse's, untyped
    assert options is not None, "llmload's roles need Locust's command line"
    return options


def runner_of(environment: Environment) -> Runner:
    """The process's runner: Locust creates it before it fires ``init``."""
    assert environment.runner is not None, "Locust creates the runner before llmload's init"
    return environment.runner


def listen(hook: EventHook, handler: Callable[..., None]) -> None:
    """``hook.add_listener(handler)``, which Locust leaves untyped."""
    hook.add_listener(handler)  # type: ignore[no-untyped-call]
