"""docs/architecture.md's tree names every module of ``src/llmload``, in its folder's part of the
tree: a module added without a line there fails here, so the picture stays the code's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src" / "llmload"


def _parts() -> list[str]:
    """The tree's parts, one per layer (a part may hold several folders)."""
    tree = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").split("```")[1]
    return [part for part in re.split(r"\n (?=[├└┌╞])", tree) if part.strip()]


def _says_something(path: Path) -> bool:
    """A package's ``__init__.py`` with code in it (not a docstring alone) is a module too."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in body
    )


def _named(module: Path, parts: list[str]) -> bool:
    rel = module.relative_to(SRC)
    if len(rel.parts) == 1:  # flags.py, errors.py: the tree's own lines
        return any(module.name in part for part in parts)
    folder = [part for part in parts if re.search(rf"\b{rel.parts[0]}/", part.splitlines()[0])]
    # By its stem as a word (``chat``, ``wait``, ``lean.py``), not as a part of a path
    return any(re.search(rf"(?<![\w/]){re.escape(module.stem)}\b", part) for part in folder)


def test_the_tree_names_every_module() -> None:
    parts = _parts()
    modules = [
        path for path in sorted(SRC.rglob("*.py")) if path.name != "__init__.py" or _says_something(path)
    ]
    assert len(modules) > 200, "the source tree was not found"
    missing = [str(path.relative_to(SRC)) for path in modules if not _named(path, parts)]
    assert missing == [], f"docs/architecture.md's tree does not name: {missing}"
