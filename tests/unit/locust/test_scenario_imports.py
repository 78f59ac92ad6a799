"""Scenarios, and the docs' examples of them, import llmload only through ``llmload.locust``.

The shipped scenarios are what users copy: a scenario that reaches into another module teaches
an import that the next refactoring breaks. One that needs something else has it exported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import llmload.locust as api

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = ROOT / "src" / "llmload" / "scenarios"
DOCS = (ROOT / "README.md", ROOT / "docs" / "scenarios.md")
API = "llmload.locust"


def outside_the_api(tree: ast.AST) -> list[str]:
    """Every import of llmload, at any depth, that is not one of ``llmload.locust``'s names."""
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] == "llmload" and a.name != API]
        elif isinstance(node, ast.ImportFrom):
            line = ast.unparse(node)
            if node.level:  # a locustfile runs as a script: relative imports are a package's
                bad.append(line)
            elif node.module and node.module.split(".")[0] == "llmload":
                public = node.module == API and all(a.name in api.__all__ for a in node.names)
                bad += [] if public else [line]
    return bad


def scenario_files() -> list[Path]:
    # The package's __init__ files list the scenarios; they are not scenarios themselves.
    return sorted(p for p in SCENARIOS.rglob("*.py") if p.name != "__init__.py")


def test_the_scenarios_are_found() -> None:
    names = {p.relative_to(SCENARIOS).as_posix() for p in scenario_files()}
    assert {"chat.py", "conversation.py", "examples/agent.py", "examples/structured.py"} <= names


def test_every_scenario_imports_llmload_only_from_the_api() -> None:
    bad = {
        p.relative_to(SCENARIOS).as_posix(): found
        for p in scenario_files()
        if (found := outside_the_api(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert bad == {}


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_the_docs_examples_import_llmload_only_from_the_api() -> None:
    blocks = {(doc.name, i): code for doc in DOCS for i, code in enumerate(python_blocks(doc.read_text()))}
    assert blocks, "the docs show scenarios in ```python blocks"
    bad = {key: found for key, code in blocks.items() if (found := outside_the_api(ast.parse(code)))}
    assert bad == {}


def test_a_private_import_is_caught() -> None:
    tree = ast.parse(
        "from llmload.locust import LLMUser, SessionUser\n"
        "from llmload.locust.conversation import ConversationUser\n"
        "import llmload.run.llm_client\n"
        "from . import helpers\n"
        "def later():\n    from llmload.core.answer import Answer\n"
    )
    assert outside_the_api(tree) == [
        "from llmload.locust import LLMUser, SessionUser",
        "from llmload.locust.conversation import ConversationUser",
        "llmload.run.llm_client",
        "from . import helpers",
        "from llmload.core.answer import Answer",
    ]
