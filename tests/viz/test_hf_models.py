"""An imported Hugging Face Marian model in the app: the Translate tabs with its layers and heads,
the Alignment grid, the Models page's card (a tiny model built from a config: these tests look at
what the views show, not at what it translates)."""
import shutil

import pytest
from streamlit.testing.v1 import AppTest

pytest.importorskip("transformers", reason="the Hugging Face tests need the hf extra")

from model.foreign.hf.family import import_hf  # noqa: E402
from model.decoding.translator import Translator  # noqa: E402
from tests.model import hf_fixtures as fx  # noqa: E402

from ..conftest import open_tab, start_app  # noqa: E402
from .test_translate_page import APP, canvas, type_sentence  # noqa: E402

NAME = "opus-mt-tiny"
SENTENCE = "a dog runs in the park"


@pytest.fixture(scope="module")
def hf_root(checkpoint_dir, tmp_path_factory):
    """A checkpoint root with the tiny RNNencdec and an imported tiny Marian (English to French)."""
    root = tmp_path_factory.mktemp("with_marian")
    shutil.copytree(checkpoint_dir / "rnnencdec-tiny", root / "rnnencdec-tiny")
    hf_dir = fx.marian(tmp_path_factory.mktemp("hf") / "opus-mt-en-fr")
    (hf_dir / "README.md").write_text("---\nlicense: cc-by-4.0\n---\n# a tiny model\n")
    import_hf(hf_dir, root / NAME)
    return root


@pytest.fixture
def at(hf_root, monkeypatch):
    start_app(monkeypatch, "--checkpoints", hf_root)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    return type_sentence(at, SENTENCE)


def test_the_translate_page_shows_its_translation_and_every_layer(at, hf_root):
    from model.decoding.search import SearchConfig

    assert at.selectbox(key="model_left").value == NAME  # the model with attention goes left
    assert "Hugging Face" in at.selectbox(key="model_left").format_func(NAME)
    search = SearchConfig(beam=at.session_state["beam"], length_norm=at.session_state["lp"])
    assert (search.beam, search.length_norm) == (4, 1.0)  # the folder's generation config, through its card
    expected = Translator.from_checkpoint(hf_root / NAME).translate([SENTENCE], search)[0]
    assert at.text[0].value == expected.translation
    at.radio(key="heads_kind").set_value("every").run()
    assert not at.exception, at.exception
    titles = [m["title"] for m in canvas(at, "matrix")]
    assert [t for t in titles if t.startswith("layer 3, head")] == [f"layer 3, head {h}" for h in (1, 2, 3, 4)]


@pytest.mark.parametrize("tab", ["Step by step", "Beam tree", "What if", "Explanations", "Teacher forcing", "Downloads"])
def test_every_tab_opens(at, tab):
    open_tab(at, tab)
    assert not at.exception, (tab, at.exception)
    if tab == "What if":
        assert at.radio(key="whatif_mode").disabled
        assert any("cannot be moved here" in c.value for c in at.caption)


def _models_card(settings, name):
    from viz.pages import models as models_page
    from viz.serving import offered_models

    models_page.card_ui(offered_models.info(name, settings), settings)


def test_the_models_page_says_what_it_is_and_its_licence(hf_root, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", hf_root)
    card = AppTest.from_function(_models_card, args=(settings, NAME), default_timeout=60).run()
    assert not card.exception, card.exception
    plain = [m.value.replace("\\", "") for m in card.markdown]
    assert any(m.startswith("**From:** Hugging Face transformers") and "Marian" in m for m in plain)
    assert any("cc-by-4.0" in m for m in plain)
    assert any("hf-marian" in m for m in plain)


def test_the_alignment_page_scores_every_layer_and_head(hf_root, tmp_path, monkeypatch):
    from .test_alignment_page import EN, FR, WA, _script

    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (tmp_path / f"toy{suffix}").write_text(text)
    settings = start_app(monkeypatch, "--checkpoints", hf_root, "--align-dir", tmp_path)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_models").set_value([NAME]).run()
    at.multiselect(key="align_methods").set_value(["attention", "heads"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    grids = [m for m in canvas(at, "matrix") if m["title"].startswith("AER")]
    assert len(grids) == 2 and all(len(g["z"]) == 3 and len(g["z"][0]) == 4 + 1 for g in grids)  # 3 layers x 4 heads + mean


def test_the_evaluate_page_scores_it(hf_root, monkeypatch):
    from .test_evaluate_page import REF, SRC, _script, upload

    settings = start_app(monkeypatch, "--checkpoints", hf_root, "--data-dir", "/nonexistent")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    upload(at, SRC.encode(), REF.encode())
    at.multiselect(key="eval_models").set_value([NAME, "rnnencdec-tiny"]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["model"]) == [NAME, "rnnencdec-tiny"]


def test_a_notebook_loads_the_folder_and_shows_its_heads(hf_root):
    from viz.notebook import load

    model = load(hf_root / NAME)
    translation = model.translate(SENTENCE)
    assert translation.trace.cross_attention.shape[:2] == (3, 4)
    assert translation.show("heads") is not None


def test_without_the_extra_the_page_says_what_to_install(hf_root, tmp_path, monkeypatch):
    import sys

    root = tmp_path / "checkpoints"  # a folder no earlier test loaded (loaded models are kept by path)
    for name in (NAME, "rnnencdec-tiny"):
        shutil.copytree(hf_root / name, root / name)
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers now raises ImportError
    start_app(monkeypatch, "--checkpoints", root)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.selectbox(key="model_left").set_value(NAME).run()
    assert any('pip install -e ".[hf]"' in e.value.replace("\\", "") for e in at.error), [e.value for e in at.error]
