"""`llmload`: the commands that are not a single Locust run.

Each subcommand lives in its own module and is imported only when chosen, so that `llmload sim`
never imports gevent or Locust (the simulator must run on an unpatched asyncio loop).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

from llmload.errors import LlmloadError
from llmload.results.exitcodes import ExitCode

_COMMANDS: dict[str, tuple[str, str]] = {
    "sim": ("llmload.sim.cli", "run a simulated OpenAI-compatible server"),
    "sweep": ("llmload.cli.sweep", "run a concurrency sweep against a server (or --sim PROFILE)"),
    "search": ("llmload.cli.search", "find the highest concurrency or rate that meets the SLOs"),
    "scenarios": ("llmload.scenarios", "list the installed scenarios and their paths (locust -f PATH)"),
    "options": ("llmload.cli.list_options", "list llmload's Locust options and their LLMLOAD_* variables"),
    "demo": ("llmload.cli.demo", "run the main job against an embedded simulator and print the result"),
    "wait": ("llmload.target.wait", "wait until a server can generate (or says it never will)"),
    "report": ("llmload.export.report", "rebuild a run's stages.csv, plots and report.html from its results"),
    "compare": ("llmload.cli.compare", "compare runs side by side, with ratios to the first"),
    "history": ("llmload.cli.history", "the runs recorded in the results store, and a key's trend"),
    "gate": (
        "llmload.cli.gate",
        "judge a run against its baseline in the results store: pass, regression, or too little data",
    ),
    "tune": ("llmload.cli.tune", "start, sweep and compare each server configuration of an experiment"),
    "calibrate": ("llmload.cli.calibrate", "measure a worker process's capacity, for --processes auto"),
}


def _usage() -> str:
    width = max(len(name) for name in _COMMANDS)
    lines = ["usage: llmload COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in _COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help"}:
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in _COMMANDS:
        print(f"llmload: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(_COMMANDS[name][0])
    try:
        code: int = module.main(rest)
    except LlmloadError as exc:
        print(f"llmload {name}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `llmload scenarios | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except KeyboardInterrupt:  # Ctrl+C outside a run (while waiting for the server, say)
        print(f"llmload {name}: interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    return code
