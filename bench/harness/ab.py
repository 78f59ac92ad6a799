"""Two revisions of ``src/`` measured side by side in one run: the machinery every ``*_ab.py``
bench shares (the revisions exported, the rounds in alternating order, the result's header)."""

from __future__ import annotations

import argparse
import io
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import results


def export(rev: str, into: Path) -> Path:
    """``src/`` of ``rev`` under ``into``."""
    data = subprocess.run(
        ["git", "archive", rev, "src"], cwd=results.REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def in_turn(trees: dict[str, Path], i: int) -> list[tuple[str, Path]]:
    """The revisions in round ``i``'s order: before first in even rounds, after first in odd
    ones. Measured one after the other, the first of a pair ran faster here by as much as the
    gap measured (7df3917 against itself: 57,206 first in a round, 43,598 last), so a fixed
    order reads as a change."""
    pairs = list(trees.items())
    return pairs if i % 2 == 0 else pairs[::-1]


def arguments(description: str | None, rounds: int) -> argparse.Namespace:
    """``--before REV [--after REV] [--rounds N] [--out PATH]``."""
    parser = argparse.ArgumentParser(description=(description or "").splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", help="default: the working tree")
    parser.add_argument("--rounds", type=int, default=rounds, help="even: each revision first as often")
    parser.add_argument("--out", type=Path)
    return parser.parse_args()


def rounds(args: argparse.Namespace, tmp: Path) -> Iterator[tuple[int, str, Path]]:
    """``(round, "before" or "after", its src/)``, each revision once a round, in turn."""
    trees = {
        "before": export(args.before, tmp / "before"),
        "after": export(args.after, tmp / "after") if args.after else results.REPO / "src",
    }
    for i in range(args.rounds):
        for name, src in in_turn(trees, i):
            yield i, name, src


def write(benchmark: str, args: argparse.Namespace, **measured: Any) -> None:
    """The result, with its header and the two revisions, to ``--out`` or bench/results."""
    doc = {
        **results.header(benchmark, f"{benchmark}.py", False),
        "before": args.before,
        "after": args.after or f"{results.git_revision()} + working tree",
        "rounds": args.rounds,
        **measured,
    }
    results.write(args.out or results.RESULTS / f"{benchmark}.json", doc)
