"""llmload's scenarios, installed with the package: locustfiles that run from any directory.

``llmload scenarios`` lists them with their paths (``locust -f PATH``); ``llmload sweep`` and
``llmload demo`` take a name (``chat``, ``examples/agent``) where they take a locustfile. The
repository's ``locustfiles/`` import these, so both ways run the same code.

This package holds files to be run by Locust, not imported: it imports nothing itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

from llmload.errors import ConfigError

HERE = Path(__file__).resolve().parent


def available() -> dict[str, Path]:
    """Every scenario by name (its path under this package, without ``.py``)."""
    files = sorted(p for p in HERE.rglob("*.py") if p.name != "__init__.py")
    return {p.relative_to(HERE).with_suffix("").as_posix(): p for p in files}


def locate(given: str, option: str = "--locustfile") -> Path:
    """A scenario's name or a locustfile's path, as the path Locust runs."""
    path = Path(given)
    if path.suffix == ".py" or path.is_file():
        if not path.is_file():
            raise ConfigError(option, given, "no such file (`llmload scenarios` lists the installed ones)")
        return path
    scenarios = available()
    if given not in scenarios:
        names = ", ".join(scenarios)
        raise ConfigError(option, given, f"no such scenario; the installed ones are {names}")
    return scenarios[given]


def with_shape(path: Path) -> str:
    """Locust's ``-f`` for a sweep of ``path``: the file itself when it has a load shape, else
    the file and ``shape.py`` (a run of plain users would last ``-t``, and a sweep's stages
    would never come). Read without importing it, as ``summary`` is."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    names |= {
        b.id if isinstance(b, ast.Name) else b.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.ClassDef)
        for b in n.bases
        if isinstance(b, ast.Name | ast.Attribute)
    }
    if any(name.endswith("Shape") for name in names):
        return str(path)
    return f"{path},{HERE / 'shape.py'}"


def summary(path: Path) -> str:
    """The first line of a scenario's docstring, read without importing it (that starts Locust)."""
    text = path.read_text(encoding="utf-8")
    start = text.find('"""')
    # a one-line docstring closes on its first line: its quotes are not part of the summary
    return text[start + 3 :].split("\n", 1)[0].split('"""', 1)[0].strip() if start >= 0 else ""


def main(argv: list[str]) -> int:
    """`llmload scenarios`: each installed scenario, its path and what it runs."""
    if argv:
        print(locate(argv[0], "scenario"))
        return 0
    scenarios = available()
    width = max(map(len, scenarios))
    for name, path in scenarios.items():
        print(f"{name:<{width}}  {summary(path)}\n{'':<{width}}  {path}")
    return 0
