"""Recorded agent sessions that the project does not ship: tau-bench's airline sessions and
SWE-agent's trajectories (MIT), converted to ``--agent-trace``'s form and kept beside the
clone, in ``../shared/agent-traces/``. Tests read them in place. Where the folder is missing
they skip (under CI=true a skip fails the run, tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FOLDER = REPO.parent / "shared" / "agent-traces"
TAU = "tau-airline-gpt4o.jsonl"  # 50 customer-service sessions, 14 tools, one call per step
SWE_FC = "swe-agent-fc.jsonl"  # 4 function-calling sessions
SWE_TEXT = "swe-agent-text.jsonl"  # 12 text-action sessions, no tools
FILES = (TAU, SWE_FC, SWE_TEXT)


def recorded(name: str) -> Path:
    """The file, or a skip that says where it was looked for."""
    path = FOLDER / name
    if not path.is_file():
        pytest.skip(f"the recorded agent sessions are not beside the clone: no {path}")
    return path
