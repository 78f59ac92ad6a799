"""Instruction counts of a piece of Python work, under valgrind's callgrind.

Wall and CPU time on this shared 2-core machine move by 10-30% between runs; the number of
instructions a given piece of work retires does not (the same bytes through the same code, with
``PYTHONHASHSEED`` fixed). So a cost that must be compared across runs or revisions is counted
here, and time only converts it to a projection.

The child runs under ``valgrind --tool=callgrind --instr-atstart=no``: the interpreter's start and
the imports run uninstrumented (at a few times native speed, not fifty), and the child marks the
spans it wants counted through callgrind's client requests, compiled once into a tiny shared
library it calls with ctypes (``Marks``). Each marked span is one dump file, read back by its
name: ``{name: instructions}``.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

_MARKS_C = r"""
#include <valgrind/callgrind.h>
void llmload_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void llmload_zero(void) { CALLGRIND_ZERO_STATS; }
void llmload_dump(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
"""
LIB_ENV = "LLMLOAD_CALLGRIND_MARKS"


def missing() -> str | None:
    """What this machine lacks to count instructions (None: nothing)."""
    if shutil.which("valgrind") is None:
        return "valgrind (scripts/install-test-deps.sh installs it)"
    if not Path("/usr/include/valgrind/callgrind.h").exists():
        return "valgrind's headers (/usr/include/valgrind/callgrind.h)"
    if shutil.which("cc") is None:
        return "a C compiler (cc)"
    return None


class Marks:
    """In the child: ``start()`` once the imports are done, then ``zero()`` before a span and
    ``dump(name)`` after it. Outside valgrind each is a no-op instruction sequence."""

    def __init__(self) -> None:
        lib = ctypes.CDLL(os.environ[LIB_ENV])
        self.start = lib.llmload_start
        self.zero = lib.llmload_zero
        self._dump = lib.llmload_dump
        self._dump.argtypes = [ctypes.c_char_p]

    def dump(self, name: str) -> None:
        self._dump(name.encode())


def count(argv: list[str], cwd: Path) -> dict[str, int]:
    """Run ``argv`` (a Python child that uses ``Marks``) under callgrind; each span it dumped,
    by name, with the instructions it retired."""
    with tempfile.TemporaryDirectory(prefix="llmload-callgrind-") as tmp:
        lib = Path(tmp) / "marks.so"
        (Path(tmp) / "marks.c").write_text(_MARKS_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, Path(tmp) / "marks.c"], check=True)
        env = {**os.environ, LIB_ENV: str(lib), "PYTHONHASHSEED": "0"}
        out = Path(tmp) / "callgrind.out"
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                "--cache-sim=no",
                f"--callgrind-out-file={out}",
                sys.executable,
                *argv,
            ],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"callgrind child failed ({done.returncode}): {done.stderr[-2000:]}")
        return read_dumps(Path(tmp).glob("callgrind.out.*"))


def read_dumps(paths: Iterable[Path]) -> dict[str, int]:
    """``{span name: instructions}`` from callgrind's dump files (``desc: Trigger: Client
    Request: NAME`` and ``summary: N``)."""
    spans: dict[str, int] = {}
    for path in paths:
        text = path.read_text(errors="replace")
        trigger = re.search(r"^desc: Trigger: Client Request: (.+)$", text, re.M)
        total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
        if trigger and total:
            spans[trigger.group(1).strip()] = int(total.group(1))
    return spans
