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
from dataclasses import dataclass, replace

from llmload.cli.child import run_child
from llmload.cli.limits import check_early
from llmload.cli.locust_call import LocustCall
from llmload.cli.processes import Asked, cores, resolve, server_is_here
from llmload.cli.rerun import rerun_client_bound
from llmload.config.commands import declare
from llmload.config.options import add_arguments, sweep_options
from llmload.core.redact import redact_argv, redact_url
from llmload.export.results import new_run_id
from llmload.results.exitcodes import ExitCode
from llmload.scenarios import locate

_DEFAULT_LOCUSTFILE = "sweep"  # the installed scenario: runs from any directory
_PROG = "llmload sweep"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
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


@dataclass(frozen=True, slots=True)
class Target:
    """Where a sweep-like command points: a server's URL, or an embedded simulator's profile."""

    host: str | None
    sim: str | None  # a profile: the command starts the simulator, and stops it at its end
    sim_args: tuple[str, ...] = ()

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> Target:
        return cls(args.host, args.sim, tuple(args.sim_arg or ()))

    @contextlib.contextmanager
    def url(self, prog: str) -> Iterator[str]:
        """The server's URL while the command runs (an embedded simulator's, up until then)."""
        if self.host:
            yield self.host
            return
        from llmload.sim.process import start_sim

        with start_sim(["--profile", str(self.sim), *self.sim_args]) as sim:
            print(f"{prog}: simulator ({self.sim}) at {sim.url}", flush=True)
            yield sim.url

    def here(self, url: str) -> bool:
        """The server runs on this machine: its cores are not the client's to take."""
        return server_is_here(url, self.sim is not None)


@dataclass(frozen=True, slots=True)
class Waiting:
    """Whether, and how long, a command waits for its server to generate before it runs."""

    skip: bool
    timeout_s: float
    log: str | None  # the server's log file, watched while waiting
    log_stall_s: float | None

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> Waiting:
        return cls(args.no_wait, args.wait_timeout, args.log, args.log_stall)

    def until_ready(self, host: str, asked: Asked) -> ExitCode:
        """OK once the server generates (at once with ``--no-wait``), or the wait's exit code."""
        if self.skip:
            return ExitCode.OK
        from llmload.target.wait import WaitCode, wait_ready

        waited = wait_ready(
            host,
            timeout_s=self.timeout_s,
            log_file=self.log,
            log_stall_s=self.log_stall_s,
            api_key=asked.api_key,
        )
        if waited.code is not WaitCode.READY:
            said = f"llmload: the server at {redact_url(host)} is not ready: {waited.message}"
            print(said, file=sys.stderr)
        return ExitCode(int(waited.code))


def echo(prog: str, command: Sequence[str]) -> None:
    """Show the Locust command line as a user could type it, secrets masked."""
    print(f"{prog}: " + " ".join(redact_argv(command[2:])), flush=True)


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    target, call = Target.parsed(args), LocustCall.parsed(args)
    locate(call.locustfile)  # a wrong name or path is said before any server is started
    asked = call.asked()
    if target.host:  # an embedded simulator is up in a moment: its Locust child checks
        check_early(target.host, asked.load(), call.processes, cores(target.here(target.host)))
    with target.url(_PROG) as host:  # the simulator outlives the child: stopped after it exits
        waited = Waiting.parsed(args).until_ready(host, asked)
        if waited is not ExitCode.OK:
            return int(waited)
        here = target.here(host)
        processes = resolve(call.processes, host, asked, asked.load(), server_here=here, prog=_PROG)
        # named here: a rerun reads its summary
        run = replace(call, processes=processes).with_(run_id=call.run_id or new_run_id())
        command = run.command(host)
        echo(_PROG, command)
        code = run_child(command).returncode
        # a run that could not start measured nothing, so nothing of it was client-bound
        if call.processes is None and code not in (ExitCode.INTERRUPTED, ExitCode.COULD_NOT_START):
            rerun_client_bound(run, host, cores(here), prog=_PROG)
        return code
