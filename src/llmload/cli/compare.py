"""``llmload compare RUN_A RUN_B [RUN_C ...]``: the command over ``compare`` (the model) and
``compare_render`` (console, Markdown, HTML), which it alone imports both of. ``--baseline
NAME`` puts a pinned baseline of the results store first (docs/history.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from llmload.cli.store import open_existing, store_option
from llmload.config.commands import declare
from llmload.errors import ConfigError, ResultsError
from llmload.export import compare_render
from llmload.export.compare import compare
from llmload.export.rundata import load_run


def _parse_levels(text: str | None) -> list[int] | None:
    if not text:
        return None
    try:
        levels = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError("--stages", text, "expected concurrency levels such as 1,32,128") from None
    if not levels or min(levels) < 1:
        raise ConfigError("--stages", text, "levels must be integers >= 1")
    return levels


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="llmload compare", description="Compare runs side by side, with ratios to the first."
    )
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR", help="two or more results directories")
    declare(p, "--baseline")
    store_option(p)
    declare(p, "--format", "--out", "--stages")
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.baseline is not None:
        if args.baseline.startswith("rolling:"):
            raise ConfigError(
                "--baseline", args.baseline, "compare takes a pinned run's NAME; rolling:N is the gate's"
            )
        args.runs = [_pinned(args.baseline, args.history), *args.runs]
    if len(args.runs) < 2:
        raise ConfigError("RUN_DIR", " ".join(map(str, args.runs)), "give at least two runs to compare")
    comparison = compare([load_run(path) for path in args.runs], _parse_levels(args.stages))
    text = {
        "console": compare_render.console,
        "markdown": compare_render.markdown,
        "html": compare_render.html_page,
    }[args.format](comparison)
    if args.out is None:
        sys.stdout.write(text)
        return 0
    try:
        args.out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ResultsError(f"cannot write {args.out}: {exc}") from None
    print(f"comparison: {args.out}")
    return 0


def _pinned(name: str, given: str | None) -> Path:
    """The results directory of the run the store pins as ``name``."""
    with open_existing(given) as store:
        pins, runs = store.pins(), store.runs()
    pin = next((p for p in pins if p.name == name), None)
    if pin is None:
        names = ", ".join(p.name for p in pins) or "none yet"
        raise ConfigError(
            "--baseline", name, f"is no pinned baseline ({names}): llmload history pin RUN --as NAME"
        )
    run = next((r for r in runs if r.run_id == pin.run_id and r.started_at == pin.started_at), None)
    if run is None:
        raise ResultsError(
            f"the pinned baseline {name!r} names run {pin.run_id}, which the store no longer holds"
        )
    return Path(run.results_dir)
