"""The layering of ``generator/``, read from the source as a reviewer would: every import
(function-level ones included, since they run too) between the package's modules.

- no import cycle, between modules or between packages (``generator/<x>/`` or the
  top-level module ``generator/<x>.py`` is one unit);
- ``corpus/`` (content files → model) imports none of the cores that read its model;
- the pure cores never import the site, the commands, the pipeline or the engine;
- ``site/`` renders a finished model: it never imports the pipeline, the commands or the engine;
- the engine (``engine/``: memo, cache, workers, staging, recorded keys) is the one room of
  reuse: no function outside it (and the pipeline, which hands it the cores) takes a memo.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def imports() -> dict[str, frozenset[str]]:
    """Module → the package's modules it imports (``from x import y`` counts x, and x.y when
    y is a module)."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    found: dict[str, frozenset[str]] = {}
    for name, path in sorted(modules.items()):
        targets: set[str] = set()
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[: len(here) - node.level + 1] + ([node.module] if node.module else []))
                targets.update(t for t in [base, *(f"{base}.{a.name}" for a in node.names)] if t in modules)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name in modules)
        targets.discard(name)
        found[name] = frozenset(targets)
    return found


def unit(module: str) -> str:
    """``generator.site.pages`` → ``site``; ``generator.engine.cache`` → ``cache``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "generator"


def unit_imports() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, targets in imports().items():
        edges.setdefault(unit(module), set()).update(unit(t) for t in targets if unit(t) != unit(module))
    return edges


def test_the_import_graph_is_read() -> None:
    """A guard for the guard: the walk sees the imports it must see."""
    graph = imports()
    assert "generator.corpus.model" in graph["generator.corpus.load"]
    assert "generator.pipeline" in graph["generator.cli"]  # imported inside a function
    assert len(graph) > 60


def test_no_module_imports_itself_back() -> None:
    graph = nx.DiGraph([(a, b) for a, targets in imports().items() for b in targets])
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert cycles == [], f"import cycles between modules: {cycles}"


def test_no_package_imports_itself_back() -> None:
    graph = nx.DiGraph([(a, b) for a, targets in unit_imports().items() for b in targets])
    cycles = sorted(sorted(c) for c in nx.simple_cycles(graph))
    assert cycles == [], f"import cycles between packages: {cycles}"


def test_a_cycle_would_be_caught() -> None:
    graph = nx.DiGraph([("corpus", "selection"), ("selection", "corpus")])
    assert list(nx.simple_cycles(graph))


def test_the_loader_imports_no_core() -> None:
    """Record files (verdicts, oppositions, proposals, analysis records) are parsed with the
    loader; the cores read the model it makes."""
    assert unit_imports()["corpus"] <= {"problems", "text", "markup", "kinds", "files", "journal", "digest"}


@pytest.mark.parametrize("core", ["corpus", "anchoring", "synthesis", "selection", "verification", "extracting"])
def test_cores_import_nothing_above_them(core: str) -> None:
    above = unit_imports().get(core, set()) & {"site", "commands", "pipeline", "engine", "cli"}
    assert above == set(), f"{core}/ imports {sorted(above)}"


def test_the_site_imports_no_pipeline_command_or_engine() -> None:
    above = unit_imports()["site"] & {"pipeline", "commands", "engine", "cli"}
    assert above == set(), f"site/ imports {sorted(above)}"


REUSE = ("memo", "Memo", "NO_MEMO", "KindsOnly", "RecordingMemo")


def test_no_function_outside_the_engine_takes_a_memo() -> None:
    """Reuse lives in one room: a parameter named ``memo`` or typed as one (or a jobs count,
    a fork) is found only in ``engine/`` and in the pipeline that hands the engine its stages."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if unit(module) in ("engine", "pipeline", "commands", "cli"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for argument in arguments:
                    written = ast.unparse(argument.annotation) if argument.annotation else ""
                    if argument.arg == "memo" or any(name in written for name in REUSE):
                        found.append(f"{module}.{node.name}({argument.arg})")
            elif isinstance(node, ast.Attribute) and node.attr in ("fork", "fork_map", "fork_iter"):
                found.append(f"{module}: {ast.unparse(node)}")
    assert found == []


def test_the_memo_check_sees_a_memo() -> None:
    """A guard for the guard."""
    tree = ast.parse("def f(site, memo: Memo = NO_MEMO) -> None: ...")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef) and function.args.args[1].arg == "memo"
