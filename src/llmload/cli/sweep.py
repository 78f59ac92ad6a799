"""`llmload sweep`: the concurrency sweep an engineer runs to compare engines.

It waits for the server (a model can take minutes to load; that time is never warm-up), then
runs the ``sweep`` scenario (``llmload/scenarios/sweep.py``) headless: one stage per level,
each with warm-up, measured window and drain, and writes the results directory and report.
``--sim PROFILE`` starts an embedded simulator instead of a ``--host``. Anything after ``--``
goes to Locust unchanged.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Sequence

from llmload.cli.child import run_child
from llmload.cli.limits import check_early
from llmload.cli.processes import Asked, asked_of, cores, resolve, server_is_here
from llmload.cli.rerun import rerun_client_bound
from llmload.config.commands import declare
from llmload.config.options import add_arguments, sweep_options, to_argv
from llmload.core.redact import redact_argv, redact_url
from llmload.export.results import new_run_id
from llmload.results.exitcodes import ExitCode
from llmload.scenarios import locate, with_shape

_DEFAULT_LOCUSTFILE = "sweep"  # the installed scenario: runs from any directory


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload sweep", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    declare(p.add_mutually_exclusive_group(required=True), "--host", "--sim")
    declare(p, "--sim-arg", "--processes", "--no-wait", "--wait-timeout", "--log", "--log-stall")
    add_arguments(
        p.add_argument_group("passed on to Locust (see `llmload options`)"),
        sweep_options(),
        env=False,
        sweep=True,
    )
    declare(p, "--locustfile", defaults={"--locustfile": _DEFAULT_LOCUSTFILE})
    p.add_argument("locust_args", nargs="*", help="after --: passed to Locust as they are")
    return p


@contextlib.contextmanager
def _target(args: argparse.Namespace) -> Iterator[str]:
    if args.host:
        yield args.host
        return
    from llmload.sim.process import start_sim

    with start_sim(["--profile", args.sim, *(args.sim_arg or ())]) as sim:
        print(f"llmload sweep: simulator ({args.sim}) at {sim.url}", flush=True)
        yield sim.url


def locust_command(args: argparse.Namespace, host: str) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        with_shape(locate(args.locustfile)),
        "--headless",
        "--host",
        host,
        *to_argv(args, sweep_options()),
        "--only-summary",
        "--loglevel",
        "WARNING",
    ]
    if args.processes:  # None (auto) is resolved before, by ``processes.resolve``
        command += ["--processes", str(args.processes)]
    return command + list(args.locust_args)


def wait_for(args: argparse.Namespace, host: str, asked: Asked) -> ExitCode:
    """Wait until the server generates (unless --no-wait): OK, or the wait's exit code."""
    if args.no_wait:
        return ExitCode.OK
    from llmload.target.wait import WaitCode, wait_ready

    waited = wait_ready(
        host,
        timeout_s=args.wait_timeout,
        log_file=args.log,
        log_stall_s=args.log_stall,
        api_key=asked.api_key,
    )
    if waited.code is not WaitCode.READY:
        print(f"llmload: the server at {redact_url(host)} is not ready: {waited.message}", file=sys.stderr)
    return ExitCode(int(waited.code))


def echo(prog: str, command: Sequence[str]) -> None:
    """Show the Locust command line as a user could type it, secrets masked."""
    print(f"{prog}: " + " ".join(redact_argv(command[2:])), flush=True)


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    locate(args.locustfile)  # a wrong name or path is said before any server is started
    asked = asked_of(args)
    if args.host:  # an embedded simulator is up in a moment: its Locust child checks
        check_early(args.host, asked.load(), args.processes, cores(server_is_here(args.host, False)))
    with _target(args) as host:  # the simulator outlives the child: stopped after it exits
        waited = wait_for(args, host, asked)
        if waited is not ExitCode.OK:
            return int(waited)
        here = server_is_here(host, args.sim is not None)
        auto = args.processes is None
        args.processes = resolve(
            args.processes, host, asked, asked.load(), server_here=here, prog="llmload sweep"
        )
        args.run_id = args.run_id or new_run_id()  # named here: a rerun reads its summary
        command = locust_command(args, host)
        echo("llmload sweep", command)
        code = run_child(command).returncode
        # a run that could not start measured nothing, so nothing of it was client-bound
        if auto and code not in (ExitCode.INTERRUPTED, ExitCode.COULD_NOT_START):
            rerun_client_bound(args, host, locust_command, cores(here), prog="llmload sweep")
        return code
