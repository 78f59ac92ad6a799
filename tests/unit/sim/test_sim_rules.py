"""The simulator's structural rules: small modules, short functions, no gevent or Locust."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import llmload.sim

SIM_DIR = Path(llmload.sim.__file__).parent
MODULES = sorted(SIM_DIR.glob("*.py"))
FORBIDDEN = {"gevent", "locust", "geventhttpclient", "aiohttp", "fastapi", "httpx", "requests"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_module_is_small_with_short_functions(path: Path) -> None:
    source = path.read_text()
    assert len(source.splitlines()) <= 400
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            assert node.end_lineno - node.lineno + 1 <= 50, f"{path.name}:{node.name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_no_forbidden_imports_and_no_mutable_module_state(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names = {(node.module or "").split(".")[0]}
        else:
            continue
        assert not names & FORBIDDEN, f"{path.name} imports {names & FORBIDDEN}"
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            mutable = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
            assert not isinstance(node.value, mutable), f"{path.name}:{node.lineno}"


def test_importing_every_module_leaves_the_socket_module_alone() -> None:
    names = [f"llmload.sim.{p.stem}" for p in MODULES if p.stem not in {"__main__"}]
    code = (
        "import socket, sys; original = socket.socket\n"
        f"import {', '.join(names)}\n"
        "bad = {'gevent', 'locust'} & set(m.split('.')[0] for m in sys.modules)\n"
        "assert not bad, bad\n"
        "assert socket.socket is original and socket.socket.__module__ == 'socket'\n"
        "print('clean')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.stdout.strip() == "clean", result.stderr
