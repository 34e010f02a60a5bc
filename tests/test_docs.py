"""The README and docs/ stay true to the code: links resolve, the set-up commands are the ones CI
runs, and every function docs/architecture.md names exists."""
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
INSTALL = 'pip install -e . && streamlit run app.py'
TEST = 'pip install -e ".[test,joey,hf]" && pip install --no-deps joeynmt==2.3.0 && python -m pytest'


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_resolve(page):
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
        if not re.match(r"[a-z]+://", target):
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"


def test_readme_has_the_two_set_up_commands_and_ci_runs_the_same_tests():
    readme = (REPO / "README.md").read_text()
    assert INSTALL in readme and TEST in readme
    assert TEST.replace("pip install", "pip install -q") in (REPO / ".ci" / "run").read_text()
    assert len(readme.encode()) < 12_000  # a product README; reference material lives in docs/


def _named_functions() -> list[tuple[str, str]]:
    text = (REPO / "docs" / "architecture.md").read_text()
    return sorted(set(re.findall(r"`((?:model|viz)/[\w/]+)\.py` · `([\w.]+)`", text)))


@pytest.mark.parametrize("module, qualname", _named_functions(), ids=lambda v: str(v))
def test_every_function_the_architecture_page_names_exists(module, qualname):
    owner = importlib.import_module(module.replace("/", "."))
    for part in qualname.split("."):
        owner = getattr(owner, part)
    assert owner is not None


def test_the_architecture_page_lists_every_module():
    text = (REPO / "docs" / "architecture.md").read_text()
    for package in ("model", "viz"):
        for path in sorted((REPO / package).rglob("*.py")):
            if path.name != "__init__.py" and "node_modules" not in path.parts:  # viz/web's ESLint is not ours
                name = path.relative_to(REPO / package).as_posix()
                assert f"| `{name}` |" in text, f"docs/architecture.md lacks {package}/{name}"
