"""The notebook API: translations that show themselves, views by name, a pair side by side; and
the example notebook, executed headlessly against the fixture models."""
from pathlib import Path

import pytest

from viz.figures.download_config import file_stem
from viz.notebook import VIEWS, UnknownView, compare, load

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def models(tiny_checkpoints):
    return load(tiny_checkpoints["rnnsearch"]), load(tiny_checkpoints["rnnencdec"])


def test_a_translation_shows_its_text_heatmap_and_beam(models):
    search, _ = models
    t = search.translate("a dog runs in the park")
    page = t._repr_html_()
    assert t.text == "un chien court dans le parc" and t.text in page
    assert "heatmap" in page and "Beam search:" in page and "<ol><li>un chien court dans le parc" in page
    assert len(search.translate(["a dog", "the cat"])) == 2


def test_every_view_renders_and_an_unknown_one_names_them(models):
    search, encdec = models
    t = search.translate("<b>a</b> dog", words=True)
    for view in VIEWS:
        assert t.show(view).html
    assert "<b>a</b>" not in t.show("steps").html  # user text escaped
    assert "no attention" in encdec.translate("a dog").show("alignment").html
    assert "heatmap" in encdec.translate("a dog").show("saliency").html  # RNNencdec still gets saliency
    with pytest.raises(UnknownView, match="no view 'tree'; choose one of: alignment, beam, steps, saliency, neighbours"):
        t.show("tree")


def test_neighbours_list_a_training_sentence_first_among_its_own(models, tiny_corpus):
    import gzip

    sentence = gzip.decompress((tiny_corpus / "train.en.gz").read_bytes()).decode().splitlines()[9]
    for model in models:
        page = model.translate(sentence).show("neighbours").html
        rows = page.split("<tr><td>")[1:]
        assert len(rows) == 10 and rows[0].startswith("1.000</td><td>" + sentence + "</td>")
        assert "scattergl" in page


@pytest.mark.parametrize("view, chart", [("alignment", "attention"), ("beam", "beam_search"), ("saliency", "saliency")])
def test_each_chart_downloads_a_png_named_after_its_model_and_chart(models, view, chart):
    search, _ = models
    page = search.translate("a dog runs").show(view).html
    stem = file_stem(f"{search.name}_{chart}")
    assert f'"toImageButtonOptions": {{"format": "png", "filename": "{stem}"' in page


def test_two_models_side_by_side(models):
    page = compare(*models, "a dog runs")._repr_html_()
    assert page.count("<b>") == 2 and "display:flex" in page and "no attention" in page


def test_a_name_is_looked_up_in_the_apps_default_checkpoint_root(checkpoint_dir, monkeypatch):
    """The notebook API and the app share one default root (viz/serving/settings.py)."""
    import viz.notebook as notebook

    monkeypatch.setattr(notebook, "default_checkpoint_root", lambda: checkpoint_dir)
    assert notebook.load("rnnencdec-tiny").translator.arch == "rnnencdec"


def test_the_example_notebook_runs_top_to_bottom(checkpoint_dir, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("NOTEBOOK_SEARCH", str(checkpoint_dir / "rnnsearch-tiny"))  # load() takes a folder too
    monkeypatch.setenv("NOTEBOOK_ENCDEC", str(checkpoint_dir / "rnnencdec-tiny"))
    notebook = nbformat.read(REPO / "notebooks" / "paper.ipynb", as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    shown = [out for cell in code[1:] for out in cell.outputs if "text/html" in out.get("data", {})]
    assert len(shown) == len(code) - 1  # every cell after the set-up shows a figure or table
    assert sum("plotly" in out["data"]["text/html"].lower() for out in shown) >= 3
    assert not any(out.get("output_type") == "error" for cell in code for out in cell.outputs)


@pytest.mark.parametrize("kind, magic", [("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_a_translation_saves_the_paper_style_figure(models, tmp_path, kind, magic):
    search, encdec = models
    path = search.translate("a dog runs", words=True).save(tmp_path / f"fig.{kind}")
    assert path.read_bytes().startswith(magic)
    assert encdec.translate("a dog").save(tmp_path / f"sal.{kind}", "saliency").read_bytes().startswith(magic)
    with pytest.raises(UnknownView, match="has no attention"):
        encdec.translate("a dog").save(tmp_path / f"x.{kind}")
