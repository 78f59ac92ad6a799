"""``llmload compare RUN_A RUN_B [RUN_C ...]``: the command over ``compare`` (the model) and
``compare_render`` (console, Markdown, HTML), which it alone imports both of."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

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
    p.add_argument("--format", choices=("console", "markdown", "html"), default="console")
    p.add_argument("--out", type=Path, help="write to this file instead of stdout")
    p.add_argument(
        "--stages",
        help="concurrency levels for the latency rows, e.g. 1,32,128 "
        "(default: the lowest, a middle and the highest common level)",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
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
