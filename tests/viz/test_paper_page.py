"""AppTest runs of the Paper page against tiny checkpoints whose training corpora have a test set."""
import json
import re
import shutil

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from model.decoding.search import SearchConfig
from model.decoding.translator import Translator

from ..conftest import make_pairs, open_tab, start_app, write_corpus
from .test_translate_page import canvas

SECTIONS = ["The model (§3, App. A)", "Figure 2: long sentences", "Figure 3: alignments", "Table 1: BLEU",
            "What came next: the Transformer"]


def _paper(settings):
    from viz.pages import menu
    from viz.pages import paper as paper_page

    menu.all_pages(settings)  # registers the pages it links to, as app.py does
    paper_page.render(settings)


@pytest.fixture
def paper_root(tiny_checkpoints, tmp_path, monkeypatch):
    """The tiny pair, trained (their configs say) on a folder that also holds a test set, with
    cards that carry a length stress test as shipped cards do; the app's settings with them."""
    data = tmp_path / "data"
    write_corpus(data, "test_2016_flickr", make_pairs(30, seed=9), gz=False)
    root = tmp_path / "checkpoints"
    for arch, path in tiny_checkpoints.items():
        folder = root / f"{arch}-tiny"
        shutil.copytree(path, folder)
        config = json.loads((folder / "config.json").read_text())
        config["train"]["data_dir"] = str(data)
        (folder / "config.json").write_text(json.dumps(config))
        stress = [{"k": k, "items": 30 // k, "source_words": 5.5 * k, "bleu": 60 - 8 * k * (arch == "rnnencdec"),
                   "length_ratio": 1.0} for k in (1, 2, 3, 4)]
        card = {**json.loads((folder / "card.json").read_text()), "pair": "everyday", "trained_on": "toy sentences",
                "length_stress": {"data/test_2016_flickr": stress},
                "test_scores": {"data/test_2016_flickr": {"bleu": 60.0, "decoding": "beam 5, length norm 1.0"}},
                "alignment": {"toy-gold": {"sentences": 9, "rows": [
                    {"model": f"{arch}-tiny", "method": "attention" if arch == "rnnsearch" else "saliency",
                     "extraction": "target", "aer": 0.5 if arch == "rnnsearch" else 0.6, "precision": 0.5,
                     "recall": 0.5, "sentences": 9},
                    {"model": None, "method": "diagonal", "extraction": "target", "aer": 0.55, "precision": 0.4,
                     "recall": 0.4, "sentences": 9}]}}}
        (folder / "card.json").write_text(json.dumps(card))
    return start_app(monkeypatch, "--checkpoints", root)


def open_section(at, label):
    return open_tab(at, label, key="paper_section")


def test_every_section_renders(paper_root):
    at = AppTest.from_function(_paper, args=(paper_root,), default_timeout=120).run()
    assert not at.exception, at.exception
    assert len(at.get("latex")) == 9  # h_j, s_0, e_ij, alpha_ij, c_i, gates, s_i, output, RNNencdec's fixed c
    assert any("Computed by `model/network/decoder.py · Decoder.context`" in c.value for c in at.caption)
    open_section(at, SECTIONS[1])
    (stress,) = canvas(at, "lines")  # from the cards, drawn on a canvas
    assert [line["name"] for line in stress["lines"]] == ["rnnsearch-tiny", "rnnencdec-tiny"]
    open_section(at, SECTIONS[2])
    grid = [h for h in canvas(at, "matrix") if not h["title"].startswith("attention α at update")]  # on a canvas
    assert len(grid) == 8 and all(h["palette"] == "greys" for h in grid)  # four reordering sentences, the paper's four
    replay = [h for h in canvas(at, "matrix") if h["title"].startswith("attention α at update")]
    assert len(replay) == 1  # the training replay's heatmap
    assert any("news and parliament text" in m.value for m in at.markdown)
    open_section(at, SECTIONS[3])
    assert list(at.dataframe[0].value["all sentences"])[:2] == [13.93, 21.50]
    assert any("Why the numbers differ" in m.value for m in at.markdown)
    links = [link.proto for link in at.get("page_link")]
    assert any(link.page.endswith("evaluate") and link.label == "Score a pair yourself on data/test_2016_flickr"
               for link in links)


def test_equation_values_match_the_trace(paper_root):
    at = AppTest.from_function(_paper, args=(paper_root,), default_timeout=120).run()
    at.text_input(key="paper_src").input("a dog runs in the park").run()
    at.slider(key="paper_step").set_value(2).run()
    assert not at.exception
    line = next(m.value for m in at.markdown if m.value.startswith("Σ_j α_2j"))
    total, gap = re.match(r"Σ_j α_2j = ([\d.]+) · max_j \|softmax\(e_2\)_j − α_2j\| = ([\d.e+-]+)", line).groups()
    assert float(total) == pytest.approx(1.0, abs=1e-4) and float(gap) < 1e-5
    trace = Translator.from_checkpoint(paper_root.checkpoints / "rnnsearch-tiny").translate(["a dog runs in the park"],
                                                                                SearchConfig(beam=5))[0]
    charts = {c["download"]["filename"]: c for c in canvas(at)}  # drawn on a canvas, named by their keys
    np.testing.assert_allclose(charts["paper_alpha"]["z"][0], trace.attention[1], atol=1e-5)
    np.testing.assert_allclose(charts["paper_e"]["values"], trace.energies[1], atol=1e-4)
    assert any(m.value.startswith("‖c‖ = ") and "at all" in m.value for m in at.markdown)  # RNNencdec's fixed c
    assert sum(c.value.startswith("How faithful: removing the most-attended") for c in at.caption) == 1  # under α


def test_figure_2_recomputes_on_a_small_test_set(paper_root):
    at = open_section(AppTest.from_function(_paper, args=(paper_root,), default_timeout=180).run(), SECTIONS[1])
    assert at.selectbox(key="paper_fig2_test").value == "data/test_2016_flickr"
    at.button(key="paper_fig2_run").click().run()
    assert not at.exception, at.exception
    summary = at.dataframe[0].value
    assert sorted(set(summary["k"])) == [1, 2, 3, 4] and set(summary["model"]) == {"rnnsearch-tiny", "rnnencdec-tiny"}
    live = [chart for chart in canvas(at, "lines") if chart["title"].startswith("BLEU by source length, first")]
    assert {line["name"] for line in live[0]["lines"]} == {"rnnsearch-tiny", "rnnencdec-tiny"}


def test_figure_3_shows_the_measured_alignment_from_the_cards(paper_root):
    at = AppTest.from_function(_paper, args=(paper_root,), default_timeout=120).run()
    open_section(at, SECTIONS[2])
    assert not at.exception, at.exception
    (table,) = [d.value for d in at.dataframe if "AER" in d.value.columns]
    assert list(table["source"]) == ["rnnsearch-tiny · attention", "(baseline) · diagonal", "rnnencdec-tiny · saliency"]
    assert list(table["AER"]) == [0.5, 0.55, 0.6]  # sorted, lower is better
    assert any(link.proto.page.endswith("alignment") for link in at.get("page_link"))
    heatmaps = [h for h in canvas(at, "matrix") if h["download"]["filename"].startswith("paper_fig3_")]
    checks = [c.value for c in at.caption if c.value.startswith("How faithful: removing the most-attended")]
    assert heatmaps and len(checks) == len(heatmaps)  # each of Figure 3's heatmaps says how faithful it is


def test_what_came_next_sets_the_transformer_beside_rnnsearch_from_the_cards(paper_root, tiny_checkpoints):
    from tests.model.transformer_fixtures import save_tiny_transformer

    root = paper_root.checkpoints
    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / "transformer-tiny")
    stress = [{"k": k, "items": 30 // k, "source_words": 5.5 * k, "bleu": 62 - k, "length_ratio": 1.0}
              for k in (1, 2, 3, 4)]
    heads = [{"model": "transformer-tiny", "method": "heads", "extraction": "target", "aer": 0.3 + 0.1 * layer
              + 0.01 * (head or 0), "precision": 0.5, "recall": 0.5, "sentences": 9, "layer": layer, "head": head,
              "shifted": shifted} for shifted in (False, True) for layer in (1, 2) for head in (None, 1, 2, 3)]
    card = {"name": "transformer-tiny", "arch": "transformer", "pair": "everyday", "trained_on": "toy sentences",
            "length_stress": {"data/test_2016_flickr": stress},
            "alignment": {"toy-gold": {"sentences": 9, "rows": heads + [
                {"model": "transformer-tiny", "method": "attention", "extraction": "target", "aer": 0.5,
                 "precision": 0.5, "recall": 0.5, "sentences": 9}]}}}
    (folder / "card.json").write_text(json.dumps(card))
    at = AppTest.from_function(_paper, args=(paper_root,), default_timeout=120).run()
    open_section(at, SECTIONS[4])
    assert any("Vaswani et al." in m.value for m in at.markdown)
    sides = [h for h in canvas(at, "matrix") if h["palette"] == "greys"]
    assert len(sides) == 2  # the same sentence through RNNsearch and the Transformer
    (lengths,) = canvas(at, "lines")
    assert [line["name"] for line in lengths["lines"]] == ["rnnsearch-tiny", "rnnencdec-tiny", "transformer-tiny"]
    (kept,) = [c.value for c in at.caption if c.value.startswith("Joining 4 test sentences")]
    assert "rnnsearch-tiny keeps 100%" in kept and "rnnencdec-tiny 54%" in kept and "transformer-tiny 95%" in kept
    (grid,) = [h for h in canvas(at, "matrix") if h["title"].startswith("toy-gold: AER by layer and head")]
    assert grid["z"][0] == [0.41, 0.42, 0.43, 0.4] and grid["y_labels"] == ["layer 1", "layer 2"]
    assert (grid["x_title"], grid["y_title"]) == ("head", "decoder layer")
    (said,) = [c.value for c in at.caption if c.value.startswith("On toy-gold, the best-aligning")]
    assert "layer 1, mean of its heads (AER 0.400)" in said and "scores 0.500" in said and "attention 0.500" in said


def test_what_came_next_asks_whether_the_heads_that_align_matter(paper_root, tiny_checkpoints):
    from tests.model.transformer_fixtures import save_tiny_transformer
    from tests.viz.test_alignment_page import importance_record

    folder = save_tiny_transformer(tiny_checkpoints["rnnsearch"], paper_root.checkpoints / "transformer-tiny")
    card = {"name": "transformer-tiny", "arch": "transformer", "pair": "everyday",
            "head_importance": importance_record(2, 3, aer_sign=-1.0)}
    (folder / "card.json").write_text(json.dumps(card))
    at = AppTest.from_function(_paper, args=(paper_root,), default_timeout=120).run()
    open_section(at, SECTIONS[4])
    assert any(m.value.startswith("**Do the heads that align matter?**") for m in at.markdown)
    (cross,) = [h for h in canvas(at, "matrix") if h["title"].startswith("transformer-tiny: cross-attention")]
    assert cross["z"][1] == [0.07, 0.08, 0.09]
    (said,) = [c.value for c in at.caption if c.value.startswith("With every head on")]
    assert "rank correlation of +1.00" in said and "tend to matter more" in said
