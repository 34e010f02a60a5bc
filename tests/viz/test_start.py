"""What the server does at start (viz/pages/start.py): the landing page's work done before
its first visitor, and the sentence spaces' warm-up started; failures only logged."""
from __future__ import annotations

import asyncio
import concurrent.futures
import shutil
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viz.pages import start
from viz.serving import decodes
from viz.serving.shared_results import ResultStore

SCRIPT = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")


@pytest.fixture
def own_store(monkeypatch):
    """A translations store of this test's own (the process's holds other tests' decodes)."""
    store = ResultStore(16)
    monkeypatch.setattr(decodes, "result_store", lambda kind: store)
    return store


@pytest.fixture
def spaces_warmed(monkeypatch):
    started = []
    from viz.serving import sentence_space

    monkeypatch.setattr(sentence_space, "warm_in_background", started.append)
    return started


@pytest.fixture
def frozen(monkeypatch, own_store):
    """Each ``gc.freeze()`` call, as the number of translations made before it (nothing is frozen)."""
    calls = []
    monkeypatch.setattr(start.gc, "freeze", lambda: calls.append(len(own_store.items())))
    return calls


def test_the_first_visitor_finds_the_landing_translation_made_at_start(checkpoint_dir, tmp_path, monkeypatch,
                                                                     own_store, spaces_warmed, frozen):
    from viz.serving import explanations

    checks = ResultStore(16)
    monkeypatch.setattr(explanations, "result_store", lambda kind: checks)
    root = shutil.copytree(checkpoint_dir, tmp_path / "models")
    argv = ("--checkpoints", str(root))
    assert start.warm(argv) is None
    assert len(spaces_warmed) == 1 and spaces_warmed[0].checkpoints == root  # then the spaces' warm-up
    made = dict(own_store.items())
    assert {request.name for request in made} == {"rnnsearch-tiny", "rnnencdec-tiny"}
    assert [key[0] for key, _ in checks.items()] == ["rnnsearch-tiny"]  # the check under its heatmap, made too
    assert frozen == [2]  # once, after both models were loaded and had translated

    decoded = []
    real = decodes.decode_batch
    monkeypatch.setattr(decodes, "decode_batch", lambda path, requests: decoded.append(requests) or real(path, requests))
    monkeypatch.setattr(sys, "argv", ["app.py", *argv])
    at = AppTest.from_file(SCRIPT, default_timeout=120).run()
    assert not at.exception, at.exception
    assert decoded == []  # nothing decoded on the first visit: the page asked for exactly what was made
    assert sorted(t.value for t in at.text) == sorted(d.trace.translation for d in made.values())


@pytest.mark.parametrize("argv, stopped, warmed", [
    (("--decode-slots", "none"), "flags:", 0),  # the page shows the flags' error; nothing else starts
    (("--checkpoints", "{broken}"), "landing page:", 1),  # logged; the pages are frozen, the spaces' warm-up starts
])
def test_what_stops_the_warm_up_is_only_logged(argv, stopped, warmed, checkpoint_dir, tmp_path, own_store,
                                               spaces_warmed, frozen):
    broken = shutil.copytree(checkpoint_dir, tmp_path / "broken")
    for weights in broken.rglob("model.safetensors"):
        weights.write_bytes(b"not a checkpoint")
    found = start.warm(tuple(a.format(broken=broken) for a in argv))
    assert found is not None and found.startswith(stopped)
    assert len(spaces_warmed) == warmed and not own_store.items()
    assert len(frozen) == warmed


def test_the_lifespan_imports_the_pages_then_starts_the_warm_up_in_a_thread_and_returns(monkeypatch):
    seen = []
    monkeypatch.setattr(start, "import_pages", lambda: seen.append("imported"))
    monkeypatch.setattr(start, "warm", seen.append)
    monkeypatch.setattr(sys, "argv", ["app.py", "--checkpoints", "somewhere"])
    inside = []

    async def serve() -> None:
        async with start.warm_at_start(app=None):
            inside.append(list(seen[:1]))  # the server answers from here on

    # a thread of its own: a browser test's Playwright may hold an event loop in this worker's main thread
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(serve())).result()
    threads = [t for t in __import__("threading").enumerate() if t.name == "warm at start"]
    for thread in threads:
        thread.join(timeout=60)
    assert inside == [["imported"]]  # the pages were in before the server answered
    assert seen == ["imported", ("--checkpoints", "somewhere")]


def test_importing_the_pages_brings_in_every_page_and_torch():
    import subprocess

    code = ("import sys; from viz.pages import start; start.import_pages(); "
            "print(all(m in sys.modules for m in ('torch', 'viz.pages.translate', 'viz.pages.sentence_space', "
            "'viz.pages.evaluate', 'viz.pages.alignment', 'viz.pages.paper', 'viz.pages.models')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(SCRIPT).parents[2])
    assert done.stdout.strip() == "True", done.stderr


def test_app_py_serves_the_page_script_with_the_warm_up():
    import ast

    tree = ast.parse((Path(SCRIPT).parents[2] / "app.py").read_text())
    (assign,) = [n for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "app"]
    call = assign.value
    assert ast.unparse(call.func) == "st.App" and ast.literal_eval(call.args[0]) == "viz/pages/main.py"
    assert [ast.unparse(k.value) for k in call.keywords if k.arg == "lifespan"] == ["warm_at_start"]
