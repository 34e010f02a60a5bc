"""Models from the PyTorch, bentrevett and d2l tutorials in the app: every page opens them, the
Translate page shows what the import's own Translator outputs, every tab draws, the Models and
Paper pages say where they came from and how they differ, and the teacher-forcing tab compares
the two prefixes."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from model.foreign.tutorials.family import import_tutorial
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from tests.model.test_tutorials import files

from ..conftest import open_tab, start_app
from .test_own_model import run_translate
from .test_translate_page import canvas, heatmaps

APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")
SENTENCE = {"pytorch": "Le chien court dans le parc.", "bentrevett": "Le petit chat joue.",
            "d2l": "A dog runs in the park."}
REFERENCE = {"pytorch": "The dog runs in the park.", "bentrevett": "The small cat plays.",
             "d2l": "Un chien court dans le parc."}


@pytest.fixture(scope="module")
def imports(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("tutorial-imports")
    return {kind: import_tutorial(kind, *files(kind), out / f"{kind}-tutorial") for kind in SENTENCE}


@pytest.fixture(params=list(SENTENCE))
def kind_root(request, imports, tmp_path, monkeypatch):
    """(kind, the app's settings) with that tutorial's model alone on the server."""
    kind = request.param
    root = tmp_path / "checkpoints"
    shutil.copytree(imports[kind], root / f"{kind}-tutorial")
    return kind, start_app(monkeypatch, "--checkpoints", root, "--data-dir", tmp_path / "none")


def test_the_translate_page_shows_the_imports_own_translation_and_every_tab_draws(kind_root):
    kind, settings = kind_root
    name = f"{kind}-tutorial"
    at = run_translate(SENTENCE[kind])
    assert at.selectbox(key="model_left").value == name
    assert "imported from" in at.selectbox(key="model_left").format_func(name)
    expected = Translator.from_checkpoint(settings.checkpoints / name).translate([SENTENCE[kind]], SearchConfig())[0]
    assert at.text[0].value == expected.translation
    heat = heatmaps(at)[0]
    assert len(heat["z"]) == len(expected.target_ids) and len(heat["z"][0]) == len(expected.source_ids)
    for tab in ("Step by step", "Beam tree", "What if", "Explanations", "Downloads"):
        open_tab(at, tab)
        assert not at.exception, (tab, at.exception)
    open_tab(at, "Teacher forcing")
    assert any("reference translation" in i.value for i in at.info)
    at.text_input(key="tf_reference").input(REFERENCE[kind]).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table.columns)[:2] == ["step", "reference"] and table["reference"].iloc[-1] in ("", "</s>")
    titles = [h["title"] for h in canvas(at, "matrix")]
    assert any("reference's prefix" in t for t in titles) and any("its own prefix" in t for t in titles)
    notes = [c.value for c in at.caption if c.value.startswith("How faithful: removing the most-attended")]
    assert len(notes) == 2  # under each prefix's heatmap


def _page(which: str, settings):
    import importlib

    importlib.import_module(f"viz.pages.{which}").render(settings)


@pytest.mark.parametrize("which", ["models", "sentence_space", "alignment", "paper"])
def test_every_other_page_opens_with_an_imported_tutorial_model(kind_root, which):
    _, settings = kind_root
    at = AppTest.from_function(_page, args=(which, settings), default_timeout=120).run()
    assert not at.exception, (which, at.exception)


def _models_card(name, settings):
    from viz.pages import models as models_page
    from viz.serving import offered_models

    models_page.card_ui(offered_models.info(name, settings), settings)


def test_the_models_card_says_which_tutorial_licence_and_differences(kind_root):
    kind, settings = kind_root
    at = AppTest.from_function(_models_card, args=(f"{kind}-tutorial", settings), default_timeout=60).run()
    assert not at.exception, at.exception
    text = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "(imported)" in text and ("BSD" in text or "MIT" in text)
    assert "RNNsearch" in text  # the differences from the paper's model


def _equations(name, settings):
    from viz.pages.parts import paper_equations

    paper_equations.render(name, name, "a dog runs", settings)


def test_the_paper_equations_say_where_an_imported_tutorial_model_departs(kind_root):
    kind, settings = kind_root
    at = AppTest.from_function(_equations, args=(f"{kind}-tutorial", settings), default_timeout=120).run()
    assert not at.exception, at.exception
    plain = " ".join(m.value.replace("\\", "") for m in at.markdown)
    assert "no maxout" in plain


def _evaluate(settings):
    from viz.pages import evaluate as evaluate_page
    from viz.pages import menu

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    evaluate_page.render(settings)


def test_the_evaluate_page_scores_an_imported_tutorial_model(kind_root):
    kind, settings = kind_root
    at = AppTest.from_function(_evaluate, args=(settings,), default_timeout=120).run()
    at.file_uploader(key="eval_src").upload("test.src", (SENTENCE[kind] + "\n" + SENTENCE[kind] + "\n").encode()).run()
    at.file_uploader(key="eval_ref").upload("test.ref", (REFERENCE[kind] + "\n" + REFERENCE[kind] + "\n").encode()).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["model"]) == [f"{kind}-tutorial"]


def test_a_sentence_the_pytorch_tutorials_model_cannot_read_is_an_error_not_a_crash(imports, tmp_path, monkeypatch):
    """Only the PyTorch tutorial's vocabulary has no <unk>."""
    shutil.copytree(imports["pytorch"], tmp_path / "checkpoints" / "pytorch-tutorial")
    start_app(monkeypatch, "--checkpoints", tmp_path / "checkpoints")
    at = run_translate("Le girafe court.")
    assert any("cannot read this sentence" in e.value and "girafe" in e.value for e in at.error)
    assert not at.text  # nothing translated, nothing drawn
