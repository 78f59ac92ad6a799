"""`llmload demo`: the README's first command. Starts the simulator as a child process, runs the
main scenario against it with real Locust, and prints the result table.

Everything here is what a user would type: `llmload sim ...` then `locust -f "$(llmload
scenarios chat)" --headless ...`; the demo only saves the typing. It runs from any directory.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from llmload.cli.child import run_child
from llmload.cli.processes import Load, asked_of, resolve
from llmload.cli.sweep import echo
from llmload.config.commands import declare
from llmload.scenarios import locate

# The demo's own: a short chat run, not a sweep's 256-token answers over its own scenario
_DEFAULTS = {"--max-tokens": "128", "--locustfile": "chat"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llmload demo", description=__doc__)
    declare(p, "--profile", "--users", "--run-time", "--max-tokens", "--locustfile", defaults=_DEFAULTS)
    declare(p, "--results-dir", "--processes")
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    locustfile = locate(args.locustfile)
    from llmload.sim.process import start_sim

    with start_sim(["--profile", args.profile]) as sim:
        print(f"llmload demo: simulator ({args.profile} profile) at {sim.url}", flush=True)
        asked = asked_of(vars(args))
        load = Load(args.users, None, asked.tokens_per_request)
        processes = resolve(args.processes, sim.url, asked, load, server_here=True, prog="llmload demo")
        command = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(locustfile),
            "--headless",
            "-u",
            str(args.users),
            "-r",
            str(args.users),
            "-t",
            args.run_time,
            "--host",
            sim.url,
            "--max-tokens",
            args.max_tokens,
            "--ignore-eos",
            "--results-dir",
            args.results_dir,
            "--only-summary",
            "--loglevel",
            "WARNING",
            *(["--processes", str(processes)] if processes else []),
        ]
        echo("llmload demo", command)
        return run_child(command).returncode  # the simulator is stopped after the child
