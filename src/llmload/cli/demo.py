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
from llmload.cli.processes import Load, processes_option, resolve
from llmload.cli.sweep import echo
from llmload.scenarios import locate


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="llmload demo", description=__doc__)
    p.add_argument("--profile", default="vllm", help="simulator profile (default: vllm)")
    p.add_argument("--users", type=int, default=32, help="concurrent streams (default: 32)")
    p.add_argument("--run-time", default="30s", help="measured run time (default: 30s)")
    p.add_argument("--max-tokens", type=int, default=128)
    p.add_argument("--locustfile", default="chat", help="a scenario's name or a locustfile (default: chat)")
    p.add_argument("--results-dir", default="results")
    p.add_argument(
        "--processes",
        type=processes_option,
        default="auto",
        help="worker processes (0: one), or auto: as many as the streams need here (llmload calibrate)",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    locustfile = locate(args.locustfile)
    from llmload.sim.process import start_sim

    with start_sim(["--profile", args.profile]) as sim:
        print(f"llmload demo: simulator ({args.profile} profile) at {sim.url}", flush=True)
        load = Load(args.users, None, args.max_tokens)
        processes = resolve(args, sim.url, load, server_here=True, prog="llmload demo")
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
            str(args.max_tokens),
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
