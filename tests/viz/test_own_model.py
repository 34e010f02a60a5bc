"""Models this project did not write, in the app: the toy model of docs/own-model.md through a
registered family, and a Joey NMT import."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from sacrebleu.metrics import BLEU
from safetensors.torch import load_file, save_file
from streamlit.testing.v1 import AppTest

from model.checkpoints import families
from model.foreign.joey.family import import_joey
from model.checkpoints.folder import FORMAT, FORMAT_VERSION
from model.checkpoints.families import Family
from model.core.decodable import ModelDescription
from model.decoding.search import SearchConfig
from tests.model.test_decodable import doc_namespace

from ..conftest import open_tab, start_app
from .test_translate_page import canvas, heatmaps

APP = str(Path(__file__).resolve().parents[2] / "viz" / "pages" / "main.py")
TOY = "tiny-attention-doc"
WORDS_EN = "a the dog cat man woman child runs sits plays eats red blue big small in on park street ball".split()
WORDS_FR = "un le chien chat homme femme enfant court assis joue mange rouge bleu grand petit dans sur parc rue balle".split()


@pytest.fixture
def toy_family(monkeypatch):
    """The page's model registered as a family: its folder holds weights and its word lists."""
    ns = doc_namespace()

    def load(folder: Path, raw: dict):
        words = json.loads((folder / "words.json").read_text())
        src, tgt = ns["WordVocab"](words["src"]), ns["WordVocab"](words["tgt"])
        model = ns["TinyAttention"](len(src), len(tgt), hidden=raw["hidden"])
        model.load_state_dict(load_file(str(folder / "model.safetensors")))
        return model, src, tgt

    def describe(folder: Path, raw: dict):
        return ModelDescription("tiny-attention", True, "dot-product", origin="the own-model guide",
                                summary="GRU encoder and decoder, dot-product attention"), "en", "fr"

    monkeypatch.setitem(families.FAMILIES, "tiny-attention", Family(load, describe))
    return ns


def write_toy(folder: Path, ns: dict) -> None:
    torch.manual_seed(5)
    folder.mkdir(parents=True)
    model = ns["TinyAttention"](len(WORDS_EN) + 4, len(WORDS_FR) + 4, hidden=9)
    save_file(model.state_dict(), str(folder / "model.safetensors"))
    (folder / "words.json").write_text(json.dumps({"src": WORDS_EN, "tgt": WORDS_FR}))
    (folder / "config.json").write_text(json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION,
                                                    "family": "tiny-attention", "hidden": 9}))


@pytest.fixture
def toy_root(toy_family, tiny_checkpoints, tmp_path, monkeypatch):
    """The app started with the toy model and the tiny RNNencdec; its AppSettings."""
    root = tmp_path / "checkpoints"
    write_toy(root / TOY, toy_family)
    shutil.copytree(tiny_checkpoints["rnnencdec"], root / "rnnencdec-tiny")
    return start_app(monkeypatch, "--checkpoints", root)


def run_translate(text: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    at.text_area(key="source").input(text).run()
    assert not at.exception, at.exception
    return at


def test_a_registered_model_gets_every_translate_view(toy_root):
    at = run_translate("a dog runs in the park")
    heat = heatmaps(at)[0]
    assert len(heat["z"][0]) == 6 and all(abs(sum(row) - 1) < 1e-4 for row in heat["z"])
    assert at.selectbox(key="model_left").value == TOY  # the model with attention goes left
    assert "from the own-model guide" in at.selectbox(key="model_left").format_func(TOY)
    for tab in ("Step by step", "Beam tree", "What if", "Explanations", "Downloads"):
        open_tab(at, tab)
        assert not at.exception, (tab, at.exception)
    open_tab(at, "Explanations")
    assert heatmaps(at), "explanation heatmap"
    open_tab(at, "Beam tree")
    assert any("best" in tree["statuses"] for tree in canvas(at, "tree"))


def test_a_config_naming_an_unregistered_family_is_not_offered(toy_root, monkeypatch):
    monkeypatch.delitem(families.FAMILIES, "tiny-attention")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert not any(TOY in str(option) for option in at.selectbox(key="model_left").options)


# ---------------------------------------------------------------- a Joey NMT import


def _joey_import(tmp_path_factory, setting: str, name: str) -> Path:
    """A tiny model trained by Joey NMT with ``setting`` (tests/model/joey_fixtures.py), imported as ``name``."""
    pytest.importorskip("yaml", reason="the Joey NMT tests need PyYAML (the joey extra)")
    pytest.importorskip("joeynmt", reason="the Joey NMT tests need joeynmt 2.3.0 (pip install --no-deps joeynmt==2.3.0)")
    from tests.model.joey_fixtures import train_joey

    torch.set_num_threads(1)
    return import_joey(train_joey(tmp_path_factory.mktemp(setting), setting), tmp_path_factory.mktemp("imported") / name)


@pytest.fixture(scope="module")
def joey_import(tmp_path_factory) -> Path:
    return _joey_import(tmp_path_factory, "gru-bahdanau", "joey-gru")


@pytest.fixture
def joey_root(joey_import, tiny_checkpoints, tmp_path, monkeypatch):
    """The app started with the Joey import and the tiny RNNencdec; its AppSettings."""
    root = tmp_path / "checkpoints"
    shutil.copytree(joey_import, root / "joey-gru")
    shutil.copytree(tiny_checkpoints["rnnencdec"], root / "rnnencdec-tiny")
    return start_app(monkeypatch, "--checkpoints", root)


def test_an_imported_joey_model_is_labelled_and_every_view_works(joey_root):
    """The page shows what the adapter's own Translator outputs for the same weights and the
    page's default settings (not what the toy model learned, which varies across CPUs)."""
    from model.decoding.translator import Translator

    at = run_translate("a dog runs in the park")
    assert at.selectbox(key="model_left").value == "joey-gru"
    assert "Joey NMT" in at.selectbox(key="model_left").format_func("joey-gru")
    expected = Translator.from_checkpoint(joey_root.checkpoints / "joey-gru").translate(["a dog runs in the park"], SearchConfig())[0]
    assert at.text[0].value == expected.translation
    heat = heatmaps(at)[0]
    assert len(heat["z"][0]) == 7  # six words and the </s> Joey adds to every source
    assert len(heat["z"]) == len(expected.target_ids)  # one row per output token
    open_tab(at, "Step by step")
    assert any("energies" in bars["title"] for bars in canvas(at, "bars"))
    for tab in ("Beam tree", "What if", "Explanations"):
        open_tab(at, tab)
        assert not at.exception, (tab, at.exception)


def test_the_models_and_paper_pages_say_where_an_import_came_from(joey_root):
    from viz.serving import offered_models
    found = offered_models.info("joey-gru", joey_root)
    assert found.imported and "Joey NMT" in found.label
    at = AppTest.from_function(_paper_model_tab, args=(joey_root,), default_timeout=120).run()
    assert not at.exception, at.exception
    plain = lambda el: el.value.replace("\\", "")  # noqa: E731 (md() escapes markdown characters)
    assert any("Joey NMT" in plain(m) and "does not compute" in plain(m) for m in at.info)
    assert any("Luong et al. 2015" in plain(m) and "no maxout" in plain(m) for m in at.markdown)  # the differences
    card = AppTest.from_function(_models_card, args=(joey_root,), default_timeout=60).run()
    assert not card.exception, card.exception
    assert any(plain(m).startswith("**From:** Joey NMT 2.3.0 (imported)") for m in card.markdown)


def _paper_model_tab(settings):
    from viz.pages.parts import paper_equations
    paper_equations.render("joey-gru", "rnnencdec-tiny", "a dog runs in the park", settings)


def _models_card(settings):
    from viz.pages import models as models_page
    from viz.serving import offered_models
    models_page.card_ui(offered_models.info("joey-gru", settings), settings)


def _evaluate_page(settings):
    from viz.pages import evaluate as evaluate_page
    from viz.pages import menu

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    evaluate_page.render(settings)


def test_the_evaluate_page_scores_an_imported_model(joey_root, monkeypatch):
    settings = start_app(monkeypatch, "--checkpoints", joey_root.checkpoints, "--data-dir", "/nonexistent")
    at = AppTest.from_function(_evaluate_page, args=(settings,), default_timeout=120).run()
    src = "a dog runs in the park\nthe small cat sits\na man eats a red ball\n"
    ref = "un chien court dans le parc\nle petit chat assis\nun homme mange un balle rouge\n"
    at.file_uploader(key="eval_src").upload("test.en", src.encode()).run()
    at.file_uploader(key="eval_ref").upload("test.fr", ref.encode()).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    scores = at.dataframe[0].value
    assert list(scores["model"]) == ["joey-gru", "rnnencdec-tiny"]
    from model.decoding.translator import Translator  # the page scores the Translator's own outputs
    hyps = [t.translation for t in Translator.from_checkpoint(joey_root.checkpoints / "joey-gru").translate(src.splitlines(),
                                                                                                SearchConfig())]
    assert scores.set_index("model")["BLEU"]["joey-gru"] == round(BLEU().corpus_score(hyps, [ref.splitlines()]).score, 2)


def _info(name: str, arch: str, pair: str = "", origin: str = "this project"):
    from model.cards.schema import Card
    from viz.serving.offered_models import ModelInfo

    attention = {"rnnsearch": "additive", "rnnencdec": "", "joey-rnn": "bahdanau"}[arch]
    card = Card(name, arch, pair=pair) if pair else None
    return ModelInfo(name, arch, attention, "en", "fr", None, card,
                     description=ModelDescription(arch, arch != "rnnencdec", attention, origin=origin),
                     imported=origin != "this project")


@pytest.mark.parametrize("models, pair", [
    ([("a-search", "rnnsearch", "everyday"), ("b-encdec", "rnnencdec", "everyday"), ("joey", "joey-rnn", "")],
     ("a-search", "b-encdec")),  # the default pair first
    ([("b-encdec", "rnnencdec", "everyday"), ("joey", "joey-rnn", "")], ("joey", "b-encdec")),  # attention left
    ([("joey", "joey-rnn", ""), ("z-search", "rnnsearch", "")], ("z-search", "joey")),  # this project's first
    ([("a-encdec", "rnnencdec", ""), ("b-encdec", "rnnencdec", "")], ("a-encdec", "b-encdec")),
    ([("joey", "joey-rnn", "")], ("joey", "joey")),
])
def test_the_default_pair_puts_a_model_with_attention_left_and_another_right(models, pair):
    from viz.serving.offered_models import default_pair

    infos = [_info(name, arch, card_pair, "Joey NMT" if arch == "joey-rnn" else "this project")
             for name, arch, card_pair in models]
    assert default_pair(infos) == pair


def test_a_model_without_energies_shows_its_weights_and_says_so(toy_root, toy_family, monkeypatch):
    import dataclasses

    class NoEnergies(toy_family["TinyAttention"]):
        def step(self, *args, **kwargs):
            return dataclasses.replace(super().step(*args, **kwargs), energies=None)

    family = families.FAMILIES["tiny-attention"]

    def load(folder: Path, raw: dict):
        model, src, tgt = family.load(folder, raw)
        bare = NoEnergies(len(src), len(tgt), hidden=raw["hidden"])
        bare.load_state_dict(model.state_dict())
        return bare, src, tgt

    monkeypatch.setitem(families.FAMILIES, "tiny-attention", Family(load, family.describe))
    at = run_translate("the dog sits")
    open_tab(at, "Step by step")
    assert any("does not expose its energies" in c.value for c in at.caption)
    assert not any("energies" in bars["title"] for bars in canvas(at, "bars"))
    assert canvas(at, "bars") and canvas(at, "matrix")  # the top-k and α still drawn


LAUNCHER = '''
import json, runpy, sys
sys.path.insert(0, {repo!r})
from safetensors.torch import load_file

from model.checkpoints.families import Family, register_family
from model.core.decodable import ModelDescription
from tests.model.test_decodable import doc_namespace

ns = doc_namespace()


def load(folder, raw):
    words = json.loads((folder / "words.json").read_text())
    src, tgt = ns["WordVocab"](words["src"]), ns["WordVocab"](words["tgt"])
    model = ns["TinyAttention"](len(src), len(tgt), hidden=raw["hidden"])
    model.load_state_dict(load_file(str(folder / "model.safetensors")))
    return model, src, tgt


def describe(folder, raw):
    return ModelDescription("tiny-attention", True, "dot-product", origin="my lab"), "en", "fr"


register_family("tiny-attention", Family(load=load, describe=describe))
runpy.run_path({app!r}, run_name="__main__")
'''


def test_the_documented_launcher_opens_a_registered_model(toy_root, tmp_path, monkeypatch):
    """docs/own-model.md's my_app.py pattern: register a family, then run app.py."""
    monkeypatch.delitem(families.FAMILIES, "tiny-attention")  # the launcher registers it itself
    launcher = tmp_path / "my_app.py"
    launcher.write_text(LAUNCHER.format(repo=str(Path(APP).parent), app=APP))
    monkeypatch.setattr("sys.argv", ["my_app.py", "--checkpoints", str(toy_root.checkpoints)])
    at = AppTest.from_file(str(launcher), default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model_left").value == TOY
    assert "from my lab" in at.selectbox(key="model_left").format_func(TOY)
    assert heatmaps(at)


def _alignment_page(settings):
    from viz.pages import alignment as alignment_page
    alignment_page.render(settings)


def test_the_alignment_page_measures_an_imported_model(joey_root, tmp_path, monkeypatch):
    gold = tmp_path / "gold"
    gold.mkdir()
    (gold / "toy.en").write_text("a dog runs\nthe small cat\n")
    (gold / "toy.fr").write_text("un chien court\nle petit chat\n")
    (gold / "toy.wa").write_text("1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 S\n2 3 3 S\n")
    settings = start_app(monkeypatch, "--checkpoints", joey_root.checkpoints, "--align-dir", gold)
    at = AppTest.from_function(_alignment_page, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_methods").set_value(["attention", "saliency", "diagonal"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    rows = dict(zip(zip(table["model"], table["method"]), table["AER"]))
    assert ("joey-gru", "attention") in rows and ("joey-gru", "saliency") in rows
    from model.decoding.translator import Translator  # the page shows what the scoring code computes
    from model.scoring.attention_alignment import score_model
    from model.scoring.word_alignment import read_gold

    measured, _, _ = score_model("joey-gru", Translator.from_checkpoint(joey_root.checkpoints / "joey-gru"), ("en", "fr"),
                                 read_gold(gold / "toy.en", gold / "toy.fr", gold / "toy.wa"),
                                 ("attention", "saliency"), (at.selectbox(key="align_extraction").value,))
    assert {("joey-gru", r.method): round(r.counts.aer, 3) for r in measured} == \
        {key: aer for key, aer in rows.items() if key[0] == "joey-gru"}


def test_without_joeynmt_an_imported_model_says_how_to_install_it(joey_root, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "joeynmt", None)  # import joeynmt now raises ImportError
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model_left").value == "joey-gru"  # still offered: its config.json reads
    assert any('pip install -e ".[joey]"' in e.value.replace("\\", "") for e in at.error)
    assert [t.value for t in at.text] and heatmaps(at) == []  # the RNNencdec beside it still translates


@pytest.fixture(scope="module")
def joey_transformer_import(tmp_path_factory) -> Path:
    return _joey_import(tmp_path_factory, "transformer-pre", "joey-transformer")


def test_an_imported_joey_transformer_shows_every_layer_and_head(joey_transformer_import, tiny_checkpoints, tmp_path,
                                                                monkeypatch):
    from .test_translate_page import canvas

    root = tmp_path / "checkpoints"
    shutil.copytree(joey_transformer_import, root / "joey-transformer")
    shutil.copytree(tiny_checkpoints["rnnencdec"], root / "rnnencdec-tiny")
    start_app(monkeypatch, "--checkpoints", root)
    at = run_translate("a dog runs in the park")
    assert at.selectbox(key="model_left").value == "joey-transformer"
    at.radio(key="heads_kind").set_value("every").run()
    assert not at.exception, at.exception
    titles = [m["title"] for m in canvas(at, "matrix")]
    assert [t for t in titles if t.startswith("layer 3, head")] == [f"layer 3, head {h}" for h in (1, 2, 3, 4)]
    for tab in ("Step by step", "Beam tree", "What if", "Explanations"):
        open_tab(at, tab)
        assert not at.exception, (tab, at.exception)
