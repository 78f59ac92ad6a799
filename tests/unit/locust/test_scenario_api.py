"""The scenario API: ``llmload.locust`` exports exactly these names, all from one map.

After httpx's tests/test_exported_members.py. The names that import locust are resolved in a
child process only: importing locust monkey-patches the process, and the unit tier runs
unpatched.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict

import pytest

import llmload.locust as api

SRC = Path(__file__).resolve().parents[3] / "src"
INIT = SRC / "llmload" / "locust" / "__init__.py"

EXPECTED = {
    # user classes and shapes
    "LLMUser",
    "ChatUser",
    "CompletionsUser",
    "EmbeddingsUser",
    "RerankUser",
    "ConversationUser",
    "AgentUser",
    "OpenLoopUser",
    "TraceUser",
    "SweepShape",
    "TraceShape",
    "install",
    # the client and its replies
    "LLMClient",
    "Reply",
    "Timings",
    "Check",
    "Answer",
    "ToolCall",
    # prompts and messages
    "Prompt",
    "user_message",
    "system_message",
    "tool_result",
    "rag_messages",
}


def test_the_public_names_are_the_expected_ones() -> None:
    assert set(api.__all__) == EXPECTED
    assert len(api.__all__) == len(EXPECTED)


def test_dir_lists_the_public_names_and_nothing_else_public() -> None:
    assert [name for name in dir(api) if not name.startswith("_")] == sorted(EXPECTED)


def _type_checking_imports() -> dict[str, str]:
    """``{name: module}`` of the ``from module import name as name`` lines under TYPE_CHECKING."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
                for alias in stmt.names:
                    # ``as name``: the explicit re-export strict type checkers want
                    assert alias.asname == alias.name, ast.unparse(stmt)
                    found[alias.name] = stmt.module
    return found


def test_the_type_checking_imports_are_the_map() -> None:
    assert _type_checking_imports() == api._EXPORTS


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'SessionUser'"):
        _ = api.SessionUser
    assert not hasattr(api, "nope")


RESOLVE = """
import inspect, json, sys
import llmload.locust as api

bare = "locust" in sys.modules
plain = [name for name, module in api._EXPORTS.items() if not module.startswith("llmload.locust.")]
for name in plain:
    getattr(api, name)
after_plain = "locust" in sys.modules
homes = {}
for name in api.__all__:
    value = getattr(api, name)
    # a class's or function's own module: the map names where it is defined, not a re-export
    homes[name] = value.__module__ if inspect.isclass(value) or inspect.isfunction(value) else None
star = {}
exec("from llmload.locust import *", star)
print(json.dumps({
    "file": api.__file__, "bare": bare, "plain": plain, "after_plain": after_plain,
    "after_all": "locust" in sys.modules, "homes": homes,
    "star": sorted(k for k in star if k != "__builtins__"),
    "dir": [name for name in dir(api) if not name.startswith("_")],
}))
"""


class Resolved(TypedDict):
    file: str
    bare: bool  # locust imported by ``import llmload.locust``
    plain: list[str]  # the names defined outside the adapter
    after_plain: bool  # locust imported once they are resolved
    after_all: bool
    homes: dict[str, str | None]
    star: list[str]
    dir: list[str]


@pytest.fixture(scope="module")
def resolved() -> Resolved:
    # This checkout's code, whichever llmload the environment has installed.
    path = os.pathsep.join(filter(None, (str(SRC), os.environ.get("PYTHONPATH"))))
    done = subprocess.run(
        [sys.executable, "-c", RESOLVE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stderr
    out: Resolved = json.loads(done.stdout.splitlines()[-1])
    assert Path(out["file"]).resolve() == INIT
    return out


def test_importing_the_api_imports_no_locust(resolved: Resolved) -> None:
    assert resolved["bare"] is False


def test_the_client_types_and_message_helpers_import_no_locust(resolved: Resolved) -> None:
    # A scenario's helpers can be typed and tested in a plain process.
    assert set(resolved["plain"]) == {
        *("LLMClient", "Reply", "Timings", "Check", "Answer", "ToolCall", "Prompt"),
        *("user_message", "system_message", "tool_result", "rag_messages"),
    }
    assert resolved["after_plain"] is False


def test_every_public_name_resolves_to_where_the_map_says(resolved: Resolved) -> None:
    assert resolved["after_all"] is True  # the users and shapes are Locust's classes
    homes = resolved["homes"]
    assert set(homes) == EXPECTED
    assert {name: home for name, home in homes.items() if home not in (None, api._EXPORTS[name])} == {}
    assert homes["Check"] is None  # a type alias, not a class: nothing to compare


def test_star_import_and_dir_agree_with_all_once_everything_is_loaded(resolved: Resolved) -> None:
    assert resolved["star"] == sorted(EXPECTED)
    assert resolved["dir"] == sorted(EXPECTED)
