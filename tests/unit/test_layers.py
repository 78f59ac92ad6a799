"""The layering of docs/architecture.md, read from the code's own imports, folder by folder.

Each folder of ``src/llmload`` is a layer, and a layer imports only the layers below it:

    errors, flags < protocol, workload, sim < core < metrics < config < results
           < transport, target, history < export < run < locust < scenarios < cli

- Exactly one package imports locust: ``llmload.locust``, and the locustfiles that ship in
  ``llmload.scenarios`` (entry points Locust runs, which nothing imports). The run engine
  (``llmload.run``) and everything else import neither locust nor the adapter, so they run in
  a plain process.
- The pure core (everything up to ``results``) imports no socket, gevent, locust, httpx or
  prometheus_client.
- The simulator is a process of its own: it imports nothing of llmload but the error tree and
  the flag declaration, and only the commands (``cli``) start it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "llmload"
# Lowest first; a folder may import its own layer's and every lower layer's modules.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "flags"),
    ("protocol", "workload", "sim"),
    ("core",),
    ("metrics",),
    ("config",),
    ("results",),
    ("transport", "target", "history"),
    ("export",),
    ("run",),
    ("locust",),
    ("scenarios",),
    ("cli",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}
PURE = tuple(name for names in LAYERS[: RANK["results"] + 1] for name in names if name != "sim")
IO = (
    "socket",
    "gevent",
    "greenlet",
    "locust",
    "httpx",
    "prometheus_client",
    *(f"llmload.{name}" for names in LAYERS[RANK["results"] + 1 :] for name in names),
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
        out += sorted(target.rglob("*.py")) if target.is_dir() else [target.with_suffix(".py")]
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


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "llmload" and len(parts) > 1 else None


def test_every_module_lives_in_a_layer() -> None:
    loose = sorted(p.name for p in SRC.glob("*.py") if p.stem not in ("__init__", *RANK))
    folders = sorted(p.name for p in SRC.iterdir() if (p / "__init__.py").is_file() and p.name not in RANK)
    assert (loose, folders) == ([], [])


def test_each_layer_imports_only_the_layers_below_it() -> None:
    upward = {}
    for path in files("."):
        rel = path.relative_to(SRC)
        mine = rel.parts[0] if len(rel.parts) > 1 else rel.stem
        if mine == "__init__":
            continue
        bad = sorted(
            n
            for n in imports(path)
            if (theirs := layer_of(n)) in RANK and theirs != mine and RANK[theirs] >= RANK[mine]
        )
        if bad:
            upward[str(rel)] = bad
    assert upward == {}


def test_the_simulator_imports_only_the_error_tree_and_flags_and_only_the_commands_start_it() -> None:
    assert {
        n for p in files("sim") for n in imports(p) if layer_of(n) not in (None, "sim", "errors", "flags")
    } == set()
    starters = {str(p.relative_to(SRC)) for p in files(".") if any(layer_of(n) == "sim" for n in imports(p))}
    assert {s for s in starters if not s.startswith(("sim/", "cli/"))} == set()


def test_the_core_is_sans_io() -> None:
    assert offending(files(*PURE), IO) == {}


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


# docs/architecture.md: a module that outgrows these has two jobs, and is split along the seam
# between them; a hot loop's locals are no excuse (recorder._on_events hands the last events'
# fields to a helper of their own).
MODULE_LINES, FUNCTION_LINES = 400, 60


def test_no_module_or_function_outgrows_its_limit() -> None:
    too_long = {}
    for path in files("."):
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(SRC))
        if len(text.splitlines()) > MODULE_LINES:
            too_long[name] = len(text.splitlines())
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > FUNCTION_LINES:
                    too_long[f"{name}:{node.name}"] = lines
    assert too_long == {}
