"""The layering the project promises, over every module of every subfolder:
- model/ never reaches streamlit, plotly, matplotlib or viz (not even inside a function);
- in viz/, only the pages (viz/pages/) import streamlit; figure builders (viz/figures/) and
  the serving layer (viz/serving/) never do, nor do they import the pages;
- model/'s folders form layers in the order docs/architecture.md writes (LAYERS): a module imports
  only from its own folder and the folders below it; the top level (the command lines) may
  import any folder, and no folder imports the top level;
- viz/'s parts form layers the same way (VIZ_LAYERS, written in docs/architecture.md): i18n, figures,
  serving, the top-level modules (report, cards' Markdown, notebook), commands, pages/parts, pages;
- no two of our modules import each other, directly or around a circle."""
import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "viz")
FORBIDDEN_IN_MODEL = ("streamlit", "plotly", "matplotlib", "viz")
FORBIDDEN_BELOW_PAGES = ("streamlit", "viz.pages")  # for viz/figures, viz/serving and the notebook and command lines


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = ROOT) -> set[str]:
    """Every module ``path`` imports anywhere in its body (functions included), as absolute names."""
    parts = path.relative_to(root).with_suffix("").parts
    package = ".".join(parts[:-1])
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x / from .x import y
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = anchor + ("." + base if base else "")
            names.update(f"{base}.{alias.name}" for alias in node.names)  # "from viz.pages.parts import nav"
            names.add(base)
    return names


def python_files(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "node_modules" not in p.parts)  # viz/web's ESLint


def our_modules() -> dict[str, set[str]]:
    graph = {}
    for package in PACKAGES:
        for path in python_files(package):
            graph[module_name(path)] = {m for m in imports_of(path) if m.split(".")[0] in PACKAGES}
    return graph


def forbidden(imported: set[str], prefixes) -> list[str]:
    return sorted(m for m in imported if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("path", python_files("model"), ids=lambda p: str(p.relative_to(ROOT)))
def test_model_never_imports_the_ui_layer(path):
    bad = forbidden(imports_of(path), FORBIDDEN_IN_MODEL)
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


BELOW_PAGES = [p for p in python_files("viz") if "pages" not in p.relative_to(ROOT).parts]


@pytest.mark.parametrize("path", BELOW_PAGES,
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_pages_import_streamlit(path):
    bad = forbidden(imports_of(path), FORBIDDEN_BELOW_PAGES)
    assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_the_streamlit_check_covers_every_layer_below_the_pages():
    """figures, serving and the top-level modules are all checked; only the pages are left out."""
    checked = {p.relative_to(ROOT / "viz").parts[0] for p in BELOW_PAGES}
    assert {"figures", "serving", "notebook.py", "html_report.py"} <= checked and "pages" not in checked


def test_every_folder_is_looked_into():
    """The checks above reach modules in subfolders (a flat glob would miss them)."""
    names = set(our_modules())
    assert {"model.network.decoder", "viz.pages.translate", "viz.figures.heatmap", "viz.serving.admission"} <= names


# model/'s folders, lowest first (docs/architecture.md, "Layers"): each may import those before it.
LAYERS = ("core", "corpus", "speed", "network", "checkpoints", "foreign", "decoding", "explaining",
          "scoring", "training", "cards", "experiments")
TOP = "(top level)"


def layer_of(module: str) -> str:
    """The model/ folder a module lies in, TOP for model/'s own modules (the command lines), or ""
    for the package ``model`` itself."""
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    return parts[1] if (ROOT / "model" / parts[1]).is_dir() else TOP


def against(graph: dict[str, set[str]], package: str, order: tuple[str, ...], layer_of_module,
            free: str = "") -> list[str]:
    """Every import from a ``package`` module to a layer above its own (in ``order``, lowest
    first) or to a part not in ``order``; modules of layer ``free`` may import any layer."""
    wrong = []
    for module, deps in graph.items():
        if not module.startswith(package + "."):
            continue
        here = layer_of_module(module)
        for dep in deps:
            there = layer_of_module(dep) if dep.startswith(package + ".") else ""
            if not there or there == here or here == free:
                continue
            if there not in order or here not in order or order.index(there) > order.index(here):
                wrong.append(f"{module} ({here}) imports {dep} ({there})")
    return sorted(wrong)


def against_the_layers(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a model/ module to a folder above its own (or to the command lines)."""
    return against(graph, "model", LAYERS, layer_of, free=TOP)


def test_every_model_folder_has_its_place_in_the_layers():
    folders = {p.name for p in (ROOT / "model").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(LAYERS), "docs/architecture.md and LAYERS name every folder of model/"


def test_model_folders_import_only_downwards():
    wrong = against_the_layers(our_modules())
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("check, planted, caught", [
    ("model", {"model.network.decoder": {"model.decoding.search"},
               "model.corpus.vocab": {"model.translate"},
               "model.decoding.search": {"model.network.decoder", "model.core.errors"},
               "model.translate": {"model.decoding.translator"}},
     ["model.corpus.vocab (corpus) imports model.translate ((top level))",
      "model.network.decoder (network) imports model.decoding.search (decoding)"]),
    ("viz", {"viz.pages.parts.widgets": {"viz.pages.translate", "viz.serving.decodes"},
             "viz.serving.decodes": {"viz.notebook", "viz.i18n"},
             "viz.figures.heatmap": {"viz.i18n"},
             "viz.pages.translate": {"viz.pages.parts.widgets", "viz.figures.heatmap"}},
     ["viz.pages.parts.widgets (pages/parts) imports viz.pages.translate (pages)",
      "viz.serving.decodes (serving) imports viz.notebook ((top level))"]),
])
def test_the_layer_checks_see_a_planted_upward_import(check, planted, caught):
    """A network module reaching up to decoding, a folder reaching the command lines, a part of a
    page importing a page, the serving layer reaching the notebook: caught; the same imports
    downwards are not."""
    assert {"model": against_the_layers, "viz": against_the_viz_layers}[check](planted) == caught


@pytest.mark.parametrize("marker, pattern, order", [
    ("layers", r"`(\w+)/`", "model"),
    ("viz-layers", r"^\d+\. `([^`]+?)/?`", "viz"),
])
def test_the_layer_orders_are_the_ones_the_architecture_page_writes(marker, pattern, order):
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    written = re.search(rf"<!-- {marker} -->(.*?)<!-- /{marker} -->", page, re.S)
    assert written, f"docs/architecture.md has its layers between <!-- {marker} --> markers"
    assert re.findall(pattern, written.group(1), re.M) == list({"model": LAYERS, "viz": VIZ_LAYERS}[order])


# viz/'s parts, lowest first (docs/architecture.md, "Layers of viz/"): each may import those before it.
VIZ_LAYERS = ("i18n.py", "figures", "serving", "(top level)", "commands", "pages/parts", "pages")


def viz_layer_of(module: str) -> str:
    """The part of viz/ a module lies in (one of VIZ_LAYERS), or "" for the package ``viz`` itself."""
    parts = module.split(".")[1:]
    if not parts:
        return ""
    if parts[0] == "i18n":
        return "i18n.py"
    if parts[:2] == ["pages", "parts"]:
        return "pages/parts"
    if (ROOT / "viz" / parts[0]).is_dir():
        return parts[0]
    return "(top level)"


def against_the_viz_layers(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a viz/ module to a part above its own."""
    return against(graph, "viz", VIZ_LAYERS, viz_layer_of)


def test_every_viz_folder_has_its_place_in_the_layers():
    folders = {p.name for p in (ROOT / "viz").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders | {"pages/parts", "i18n.py", "(top level)"} == set(VIZ_LAYERS)


def test_viz_parts_import_only_downwards():
    wrong = against_the_viz_layers(our_modules())
    assert not wrong, "\n".join(wrong)


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
    # a package's __init__ is imported with any of its modules: only its own imports are edges
    edges = {name: {m for m in deps if m in graph and m != name} for name, deps in graph.items()}
    assert not cycles(edges), cycles(edges)[:3]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}})  # the check finds a three-module circle


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    """The parser finds imports hidden inside functions and resolves relative ones, in subfolders too."""
    package = tmp_path / "viz" / "figures"
    package.mkdir(parents=True)
    (package / "x.py").write_text("def f():\n    import streamlit as st\n    from . import heatmap\n"
                                  "    from ..pages import nav\n")
    found = imports_of(package / "x.py", tmp_path)
    assert {"streamlit", "viz.figures.heatmap", "viz.pages.nav"} <= found
    assert forbidden(found, FORBIDDEN_BELOW_PAGES) == ["streamlit", "viz.pages", "viz.pages.nav"]
