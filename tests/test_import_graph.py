"""The layering the project promises: model/ never reaches streamlit, plotly or viz (not even
inside a function), and no two of our modules import each other."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "viz")
FORBIDDEN_IN_MODEL = ("streamlit", "plotly", "matplotlib", "viz")


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports anywhere in its body (functions included), as absolute names."""
    package = path.parent.name
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from .x import y
                base = package + ("." + base if base else "")
                names.update(f"{base}.{alias.name}" for alias in node.names)  # "from . import common"
            names.add(base)
    return names


def our_modules() -> dict[str, set[str]]:
    graph = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).glob("*.py")):
            name = f"{package}.{path.stem}"
            graph[name] = {m for m in imports_of(path) if m.split(".")[0] in PACKAGES}
    return graph


@pytest.mark.parametrize("path", sorted((ROOT / "model").glob("*.py")), ids=lambda p: p.name)
def test_model_never_imports_the_ui_layer(path):
    bad = sorted(m for m in imports_of(path) if m.split(".")[0] in FORBIDDEN_IN_MODEL)
    assert not bad, f"model/{path.name} imports {bad}"


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles (depth-first search; each reported once per entry point)."""
    found, done = [], set()

    def visit(node, path):
        if node in path:
            found.append(path[path.index(node):] + [node])
            return
        if node in done:
            return
        for nxt in sorted(edges.get(node, ())):
            visit(nxt, path + [node])
        done.add(node)

    for start in sorted(edges):
        visit(start, [])
    return found


def test_no_modules_import_each_other():
    graph = our_modules()
    edges = {name: {m for m in deps if m in graph} for name, deps in graph.items()}
    assert not cycles(edges)
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}})  # the check finds a three-module circle


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    """The parser finds imports hidden inside functions and resolves relative ones."""
    package = tmp_path / "model"
    package.mkdir()
    (package / "x.py").write_text("def f():\n    from viz.length_chart import write\n    from . import search\n")
    assert {"viz.length_chart", "model.search"} <= imports_of(package / "x.py")
