"""``python -m llmload.sim``: the simulator without the ``llmload`` dispatcher."""

from __future__ import annotations

import sys

from llmload.errors import LlmloadError
from llmload.sim.cli import main


def _run() -> int:
    try:
        return main(sys.argv[1:])
    except LlmloadError as exc:
        print(f"llmload sim: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    sys.exit(_run())
