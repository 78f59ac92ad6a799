"""``LocustCall``: the run a sweep-like command hands its Locust child, from the command's parse
to the child's command line (``llmload sweep``, a search's probes, a rerun of client-bound
levels, a tune configuration's sweep).

A command parses its own options (where to point, whether to wait) into its own objects and
the options of Locust's table into this one, once. What follows reads it and never changes it:
the processes ``auto`` comes to, a probe at one level, a rerun with more processes are copies
(``with_``, ``own_run``). The table's options stay as parsed, by name, because the child
parses them again: the table builds the typed ``RunConfig`` there (with its environment
variables), and the parent needs only what it plans by (``asked``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType

from llmload.cli.processes import Asked, asked_of
from llmload.config.options import sweep_options, to_argv
from llmload.scenarios import locate, with_shape

_SWEEP_OPTIONS = sweep_options()
# A probe's or a rerun's levels are given: the sweep's other ways to choose them do not apply.
_OTHER_WAYS = MappingProxyType({"rates": None, "ramp": None, "until_saturated": False})


@dataclass(frozen=True, slots=True)
class LocustCall:
    options: Mapping[str, object]  # the table's sweep options by name, as the command parsed them
    locustfile: str  # a scenario's name or a path (``scenarios.locate``)
    processes: int | None  # 0: one process; None: auto, resolved before the child starts
    tail: tuple[str, ...] = ()  # the words after ``--``: Locust's, and the table's given there

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> LocustCall:
        """From a command's parse: the table's options it declared, its locustfile, its
        ``--processes`` and the words after ``--``."""
        options = {o.dest: getattr(args, o.dest) for o in _SWEEP_OPTIONS}
        return cls(MappingProxyType(options), args.locustfile, args.processes, tuple(args.locust_args))

    @property
    def run_id(self) -> str | None:
        value = self.options["run_id"]
        return None if value is None else str(value)

    @property
    def results_dir(self) -> Path:
        return Path(str(self.options["results_dir"]))

    def with_(self, **given: object) -> LocustCall:
        """A copy in which ``given`` replaces the options it names (by their parsed names)."""
        unknown = set(given) - set(self.options)
        assert not unknown, f"not a sweep option: {sorted(unknown)}"
        return replace(self, options=MappingProxyType({**self.options, **given}))

    def own_run(
        self, run_id: str, *, processes: int | None = None, tail: tuple[str, ...] = (), **given: object
    ) -> LocustCall:
        """A run of its own at chosen levels (a search's probe, a rerun of client-bound levels):
        ``given`` replaces what it names, ``tail`` adds to the words after ``--``, and the
        sweep's other ways to choose levels (rates, a ramp, until saturated) do not apply."""
        call = self.with_(**{**_OTHER_WAYS, "run_id": run_id, **given})
        processes = self.processes if processes is None else processes
        return replace(call, processes=processes, tail=(*self.tail, *tail))

    def asked(self) -> Asked:
        """What the command plans its processes and its wait by."""
        return asked_of(self.options, self.tail)

    def command(self, host: str) -> list[str]:
        """The Locust child's command line; ``processes`` must be resolved (not auto)."""
        command = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            with_shape(locate(self.locustfile)),
            "--headless",
            "--host",
            host,
            *to_argv(self.options, _SWEEP_OPTIONS),
            "--only-summary",
            "--loglevel",
            "WARNING",
        ]
        if self.processes:
            command += ["--processes", str(self.processes)]
        return command + list(self.tail)
