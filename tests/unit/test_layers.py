"""The layering of docs/architecture.md, read from the code's own imports.

- Exactly one package imports locust: ``llmload.locust``, and the locustfiles that ship in
  ``llmload.scenarios`` (entry points Locust runs, which nothing imports). The run engine
  (``llmload.run``) and everything else import neither locust nor the adapter, so they run in
  a plain process.
- The pure core imports no socket, gevent, locust, httpx or prometheus_client.
- The workload specs, the protocol and the statistics do not import the run's config: the
  config is assembled from them, never the other way round.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "llmload"
CORE = (
    "protocol",
    "metrics",
    "workload",
    "record.py",
    "recorder.py",
    "config.py",
    "stages.py",
    "phases.py",
    "options.py",
    "summary.py",
    "saturation.py",
    "answer.py",
    "verdict.py",
    "exitcodes.py",
    "failfast.py",
    "redact.py",
    "errors.py",
)
# Below the run's config: what it is built from (specs, parsing, statistics) never reads it.
BELOW_CONFIG = ("protocol", "metrics", "workload", "phases.py", "errors.py", "redact.py")
IO = (
    "socket",
    "gevent",
    "locust",
    "httpx",
    "prometheus_client",
    "llmload.locust",
    "llmload.run",
    "llmload.transport",
    "llmload.export",
    "llmload.target",
)


def _type_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under ``if TYPE_CHECKING:``: they never run."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def imports(path: Path) -> set[str]:
    """Every module a file imports when it runs, at any depth (lazy imports count too; imports
    for type checking only do not)."""
    names: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            # ``from llmload.export import compare_render`` imports a module, not a name
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def files(*parts: str) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        target = SRC / part
        out += sorted(target.rglob("*.py")) if target.is_dir() else [target]
    return out


def offending(paths: list[Path], banned: tuple[str, ...]) -> dict[str, list[str]]:
    found = {}
    for path in paths:
        bad = sorted(n for n in imports(path) if any(n == b or n.startswith(b + ".") for b in banned))
        if bad:
            found[str(path.relative_to(SRC))] = bad
    return found


def test_only_the_adapter_imports_locust() -> None:
    others = [p for p in files(".") if p.relative_to(SRC).parts[0] not in ("locust", "scenarios")]
    assert offending(others, ("locust", "llmload.locust")) == {}


def test_nothing_imports_the_scenarios() -> None:
    scenarios = {
        ".".join(("llmload", *p.relative_to(SRC).with_suffix("").parts))
        for p in files("scenarios")
        if p.name != "__init__.py"
    }
    importers = {
        str(p.relative_to(SRC)): sorted(n for n in imports(p) if n in scenarios)
        for p in files(".")
        if p.relative_to(SRC).parts[0] != "scenarios"
    }
    assert {path: names for path, names in importers.items() if names} == {}


def test_the_run_engine_knows_no_locust() -> None:
    assert files("run"), "the run engine lives in src/llmload/run"
    assert offending(files("run"), ("locust", "llmload.locust")) == {}


def test_the_core_is_sans_io() -> None:
    assert offending(files(*CORE), IO) == {}


def test_what_the_config_is_built_from_does_not_read_it() -> None:
    assert offending(files(*BELOW_CONFIG), ("llmload.config", "llmload.options")) == {}


def test_no_two_modules_import_each_other() -> None:
    by_name = {
        ".".join(("llmload", *p.relative_to(SRC).with_suffix("").parts)).removesuffix(".__init__"): p
        for p in files(".")
    }
    deps = {name: {n for n in imports(path) if n in by_name} for name, path in by_name.items()}
    pairs = sorted(
        {
            tuple(sorted((a, b)))
            for a, targets in deps.items()
            for b in targets
            if a != b and a in deps.get(b, set())
        }
    )
    assert pairs == []
