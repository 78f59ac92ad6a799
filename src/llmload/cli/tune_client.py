"""The client side of one ``llmload tune`` configuration: a sweep over its levels, or a search
for the highest level that meets the objectives, and what it measured, read back.

A sweep writes its results into ``<configuration>/`` (its run id is the configuration's
directory name); a search writes ``<configuration>/<configuration>.json`` and one run directory
per probe, ``<configuration>/<configuration>-NN/`` (so compare labels a probe's run by its
configuration). Either way the configuration's points are every level
it measured, and the run ``llmload compare`` shows for it is the sweep, or the search's highest
level that met the objectives (its lowest probe when none did).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from llmload.cli.locust_call import LocustCall
from llmload.cli.processes import resolve
from llmload.cli.search import _parser as search_parser
from llmload.cli.search import search_verdict
from llmload.cli.sweep import _parser as sweep_parser
from llmload.cli.tune_probes import read_object
from llmload.config import values
from llmload.config.experiment import Configuration, client_argv
from llmload.errors import ConfigError
from llmload.export.rundata import read_summary, verdict_of
from llmload.protocol.jsonvalue import JSON
from llmload.results.choice import Candidate, candidate


def _argv(c: Configuration, url: str, cdir: Path) -> list[str]:
    into = cdir if c.mode == "search" else cdir.parent
    return [
        "--host",
        url,
        "--no-wait",
        "--results-dir",
        str(into),
        "--run-id",
        c.dirname,
        *client_argv(c.client),
    ]


def parse_client(c: Configuration, url: str, cdir: Path) -> argparse.Namespace:
    """The configuration's options as its command parses them; a wrong one is the file's error."""
    parser = search_parser() if c.mode == "search" else sweep_parser()
    parser.exit_on_error = False
    try:
        args, unknown = parser.parse_known_args(_argv(c, url, cdir))
    except argparse.ArgumentError as exc:
        raise ConfigError(f"client.{(exc.argument_name or '').lstrip('-')}", c.name, exc.message) from None
    if unknown:
        raise ConfigError("client", " ".join(unknown), f"not an option of llmload {c.mode} (in {c.name})")
    if c.mode == "search" and not (args.slo or args.max_error_rate):
        raise ConfigError(
            "client.slo", None, f"a search needs an objective, e.g. slo = 'tpot_p50_ms<=50' (in {c.name})"
        )
    return args


def command(c: Configuration, url: str, cdir: Path, *, prometheus_port: int | None) -> list[str]:
    """The child to run: Locust for a sweep, ``llmload search`` (which runs Locust per probe)."""
    args = parse_client(c, url, cdir)
    watch = [] if prometheus_port is None else ["--prometheus-port", str(prometheus_port)]
    if c.mode == "search":
        return [sys.executable, "-m", "llmload.cli", "search", *_argv(c, url, cdir), "--", *watch]
    call = LocustCall.parsed(args)
    call = replace(call, tail=(*call.tail, *watch))  # an option Locust's parser takes
    # the configuration's server runs on this machine: tune started it
    asked = call.asked()
    prog = f"llmload tune: {c.name}"
    processes = resolve(call.processes, url, asked, asked.load(), server_here=True, prog=prog)
    return replace(call, processes=processes).command(url)


def heaviest(c: Configuration, url: str, cdir: Path) -> int:
    """The concurrency the probes ride along with: the sweep's highest level, or the search's
    ``--max``, which it tries second."""
    args = parse_client(c, url, cdir)
    if c.mode == "search":
        return int(args.max)
    return max(values.levels(args.levels, args))


@dataclass(frozen=True, slots=True)
class Measured:
    run_dir: Path  # what llmload compare shows for the configuration
    candidate: Candidate
    verdict: str


def _search_runs(result: dict[str, JSON]) -> tuple[list[Path], Path | None]:
    """The probes' run directories, and the highest level's that met the objectives."""
    probes = result.get("probes")
    runs: list[Path] = []
    best: tuple[float, Path] | None = None
    for probe in probes if isinstance(probes, list) else []:
        if not isinstance(probe, dict) or not isinstance(probe.get("summary"), str):
            continue
        run = Path(str(probe["summary"])).parent
        runs.append(run)
        level = probe.get("level")
        if probe.get("passed") and isinstance(level, int | float) and (best is None or level > best[0]):
            best = (float(level), run)
    return runs, None if best is None else best[1]


def measured(c: Configuration, cdir: Path) -> Measured | None:
    """What the configuration's client measured; None when it wrote nothing to read."""
    if c.mode == "sweep":
        if not (cdir / "summary.json").is_file():
            return None
        summary = read_summary(cdir)
        return Measured(cdir, candidate(c.name, summary), verdict_of(summary).line)
    result = read_object(cdir / f"{c.dirname}.json")
    runs, best = _search_runs(result)
    if not runs:
        return None
    found = [candidate(c.name, read_summary(run)) for run in runs]
    single = next((f.single_stream_tok_per_s for f in found if f.single_stream_tok_per_s), None)
    points = tuple(p for f in found for p in f.points)
    verdict = search_verdict(str(result.get("by", "concurrency")), _level(result, "highest_passing"),
                             _level(result, "lowest_failing"))  # fmt: skip
    merged = replace(found[0], points=points, single_stream_tok_per_s=single)
    return Measured(best or runs[0], merged, verdict.removeprefix("llmload search: "))


def _level(result: dict[str, JSON], key: str) -> float | None:
    value = result.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
