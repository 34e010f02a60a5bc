"""The notebook API: translations that show themselves, views by name, a pair side by side; and
the example notebook, executed headlessly against the fixture models."""
from pathlib import Path

import numpy as np
import pytest
import torch

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


def test_the_heatmap_says_how_faithful_it_is_for_this_sentence(models):
    from model.explaining.faithfulness import comprehensiveness_check

    search, encdec = models
    t = search.translate("a dog runs in the park")
    trace = t.trace
    check = comprehensiveness_check(t.translator.model, trace.source_ids, trace.target_ids, trace.attention.sum(0))
    shown = t.show("alignment").html
    assert f"by {check.method:.2f} per token; as many random words, by {check.random:.2f}" in shown
    assert ("more than chance" in shown) == check.beats_random
    assert "How faithful" not in encdec.translate("a dog runs in the park").show("alignment").html  # no attention


def test_the_saliency_heatmap_and_saved_figures_say_how_faithful_they_are(models, tmp_path):
    """show("saliency") and save() carry the check of the order their own picture gives."""
    from model.explaining.faithfulness import comprehensiveness_check
    from model.explaining.saliency import saliency

    _, encdec = models
    t = encdec.translate("a dog runs in the park")
    trace = t.trace
    matrix = saliency(t.translator.model, trace.source_ids, trace.target_ids)
    check = comprehensiveness_check(t.translator.model, trace.source_ids, trace.target_ids, matrix.sum(0))
    figures = f"by {check.method:.2f} per token; as many random words, by {check.random:.2f}"
    assert "removing the source words with the most saliency" in t.show("saliency").html
    assert figures in t.show("saliency").html
    import re

    svg = " ".join(" ".join(re.findall(r">([^<>]+)</text>", t.save(tmp_path / "s.svg", "saliency").read_text())).split())
    assert "source words with the most saliency" in svg and f"{check.method:.2f} per token" in svg


def test_every_view_renders_and_an_unknown_one_names_them(models):
    search, encdec = models
    t = search.translate("<b>a</b> dog", words=True)
    for view in VIEWS:
        if view == "heads":  # a Transformer's view: an RNN says what it has instead
            with pytest.raises(UnknownView, match="has one attention, not layers and heads"):
                t.show(view)
            continue
        assert t.show(view).html
    assert "<b>a</b>" not in t.show("steps").html  # user text escaped
    assert "no attention" in encdec.translate("a dog").show("alignment").html
    assert "heatmap" in encdec.translate("a dog").show("saliency").html  # RNNencdec still gets saliency
    with pytest.raises(UnknownView, match="no view .tree.; choose one of: alignment, beam, steps, saliency, explanations, neighbours, heads"):
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


# ---------------------------------------------------------------- a tutorial's model, live


def _live_objects(kind: str) -> tuple:
    """The objects a tutorial's notebook holds at its end, rebuilt from the committed fixture."""
    from types import SimpleNamespace

    from tests.model import tutorial_references as ref
    from tests.model.test_tutorials import files, vocab_json

    vocab, state = vocab_json(kind), torch.load(files(kind)[0], weights_only=True)
    if kind == "pytorch":
        langs = []
        for side in ("source", "target"):
            lang = ref.Lang()
            lang.index2word = {int(k): w for k, w in vocab[side].items()}  # ints, as in the notebook
            lang.word2index = {w: i for i, w in lang.index2word.items()}
            langs.append(lang)
        hidden = state["encoder"]["embedding.weight"].shape[1]
        encoder = ref.EncoderRNN(len(langs[0].index2word), hidden)
        decoder = ref.AttnDecoderRNN(hidden, len(langs[1].index2word))
        encoder.load_state_dict(state["encoder"])
        decoder.load_state_dict(state["decoder"])
        return encoder, decoder, *langs
    itos = lambda words: SimpleNamespace(get_itos=lambda: list(words))  # noqa: E731 (torchtext's Vocab, as used)
    if kind == "bentrevett":
        enc_h, dec_h = state["encoder.rnn.weight_hh_l0"].shape[1], state["decoder.rnn.weight_hh_l0"].shape[1]
        model = ref.Seq2Seq(ref.BEncoder(len(vocab["source"]), state["encoder.embedding.weight"].shape[1], enc_h, dec_h),
                            ref.BDecoder(len(vocab["target"]), state["decoder.embedding.weight"].shape[1], enc_h, dec_h))
        model.load_state_dict(state)
        return model, itos(vocab["source"]), itos(vocab["target"])
    layers = sum(1 for k in state if k.startswith("encoder.rnn.rnn.weight_hh_l"))
    model = ref.EncoderDecoder(ref.Seq2SeqEncoder(len(vocab["source"]), state["encoder.embedding.weight"].shape[1],
                                     state["encoder.rnn.rnn.weight_hh_l0"].shape[1], layers),
                  ref.Seq2SeqAttentionDecoder(len(vocab["target"]), state["decoder.embedding.weight"].shape[1],
                                              state["decoder.rnn.weight_hh_l0"].shape[1], layers))
    array, valid = ref.d2l_array("a", vocab["source"], vocab["num_steps"])
    model(array, torch.zeros(1, 1, dtype=torch.long), valid)
    model.load_state_dict(state)
    data = SimpleNamespace(src_vocab=SimpleNamespace(idx_to_token=vocab["source"]),
                           tgt_vocab=SimpleNamespace(idx_to_token=vocab["target"]), num_steps=vocab["num_steps"])
    return model, data


@pytest.mark.parametrize("kind, text", [("pytorch", "Le chien court dans le parc."), ("bentrevett", "Le chat joue."),
                                        ("d2l", "A dog runs in the park.")])
def test_a_tutorials_live_objects_translate_as_its_imported_files_do(kind, text, tmp_path):
    from model.foreign.tutorials.family import import_tutorial
    from tests.model.test_tutorials import files
    from viz.notebook import from_tutorial, load

    live = from_tutorial(kind, *_live_objects(kind))
    from_files = load(import_tutorial(kind, *files(kind), tmp_path / "files"))
    a, b = live.translate(text, beam=1), from_files.translate(text, beam=1)
    assert a.trace.target_tokens == b.trace.target_tokens and np.allclose(a.trace.attention, b.trace.attention)
    for view in ("alignment", "beam", "steps", "saliency"):
        assert "<div" in live.translate(text).show(view).html or view == "steps"
    saved = live.save(tmp_path / "saved")
    again = load(saved).translate(text, beam=1)
    assert again.trace.target_tokens == a.trace.target_tokens
    with pytest.raises(ValueError, match="already a checkpoint folder"):
        from_files.save(tmp_path / "copy")


def test_objects_that_are_not_a_tutorials_are_refused_clearly():
    from model.core.errors import CheckpointError
    from viz.notebook import from_tutorial

    with pytest.raises(CheckpointError, match="encoder, decoder, input_lang, output_lang"):
        from_tutorial("pytorch", object())
    with pytest.raises(CheckpointError, match="not the d2l tutorial's objects"):
        from_tutorial("d2l", object(), object())
    with pytest.raises(CheckpointError, match="unknown tutorial"):
        from_tutorial("keras", object())


def test_the_notebook_shows_teacher_forcing_for_any_model(tmp_path):
    from model.foreign.tutorials.family import import_tutorial
    from tests.model.test_tutorials import files
    from viz.notebook import from_tutorial, load

    for model in (from_tutorial("pytorch", *_live_objects("pytorch")),
                  load(import_tutorial("d2l", *files("d2l"), tmp_path / "d2l"))):
        shown = model.teacher_forcing("Le chien court." if model.name.startswith("pytorch") else "A dog runs.",
                                      "The dog runs." if model.name.startswith("pytorch") else "Un chien court.")
        assert "given the reference's prefix" in shown.html and shown.html.count("<tr") >= 4
        assert "attention given its own prefix" in shown.html


def test_a_translation_explains_itself_and_shows_how_faithful_each_method_is(tiny_checkpoints):
    search, encdec = load(tiny_checkpoints["rnnsearch"]), load(tiny_checkpoints["rnnencdec"])
    explained = search.translate("a dog runs").explain("occlusion")
    assert np.allclose(explained.shares().sum(1), 1.0)
    shown = encdec.translate("a dog runs").show("explanations").html
    assert "random order" in shown and "attention" not in shown.split("<table>")[1]  # RNNencdec: no attention rows
    assert ": faithfulness curves" in shown and "deletion: most important removed first" in shown  # drawn
    with pytest.raises(UnknownView, match="has no attention"):
        encdec.translate("a dog runs").explain("attention")
    with pytest.raises(UnknownView, match="no method 'lime'"):
        search.translate("a dog").explain("lime")


def test_a_transformer_shows_every_head_one_head_and_a_layer(tiny_checkpoints, tmp_path):
    from tests.model.transformer_fixtures import save_tiny_transformer

    t = load(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")).translate("a dog runs")
    every = t.show("heads").html
    assert all(f"layer {k}, head {h}" in every for k in (1, 2) for h in (1, 2, 3))
    assert "layer 2 (mean of heads)" in t.show("alignment", layer=2).html
    one = t.show("alignment", layer=1, head=3, shifted=True).html
    assert "layer 1, head 3, shifted" in one and "How faithful" in one
    with pytest.raises(UnknownView, match="layers 1..2 of heads 1..3"):
        t.show("alignment", layer=3)


@pytest.mark.parametrize("method", ["alti_plus", "value_zeroing", "rollout"])
def test_a_transformer_explains_itself_layer_by_layer_and_an_rnn_says_why_not(tiny_checkpoints, tmp_path, method):
    from model.explaining import registry
    from tests.model.transformer_fixtures import save_tiny_transformer

    t = load(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")).translate("a dog runs")
    found = t.explain(method)
    T, S = len(t.trace.target_ids), len(t.trace.source_ids)
    assert found.method == method and found.source.shape == (T, S) and found.prefix.shape == (T, T)
    assert np.allclose(found.shares().sum(1), 1.0) and found.shares()[0, 1] == 0  # nothing written before word 1
    search = load(tiny_checkpoints["rnnsearch"]).translate("a dog runs")
    with pytest.raises(UnknownView, match=f"cannot use {method}, which reads a Transformer layer by layer") as raised:
        search.explain(method)
    assert registry.UNSUPPORTED in str(raised.value)


def test_the_logit_lens_reads_every_decoder_layer_as_a_table(tiny_checkpoints, tmp_path):
    from tests.model.transformer_fixtures import save_tiny_transformer

    t = load(save_tiny_transformer(tiny_checkpoints["rnnsearch"], tmp_path / "t")).translate("a dog runs")
    table = t.logit_lens()
    T, L = len(t.trace.target_ids), 2  # the fixture's 2 decoder layers
    assert table.lens.ranks.shape == (L, T) and table.lens.top_ids.shape == (L, T, 5)
    # the last layer is the model's own distribution: the probabilities the decode gave its words
    assert np.allclose(table.lens.probs[-1], np.exp(t.trace.step_logprobs), atol=1e-4)
    shown = table._repr_html_()
    assert shown.count("<tr>") == 1 + L + 1  # the written pieces, a row per layer, where each settles
    assert "layer 2" in shown and "layer 3" not in shown and "never trained to be read this way" in shown
    assert t.trace.target_tokens[-1] == "</s>" and "</s>" not in shown and "<th>&lt;/s&gt;</th>" in shown  # escaped
    with pytest.raises(UnknownView, match="has no logit lens: it reads a Transformer layer by layer"):
        load(tiny_checkpoints["rnnsearch"]).translate("a dog runs").logit_lens()


def test_a_lab_experiment_returns_models_that_show_themselves():
    from viz.notebook import lab

    models = lab("copy", archs=("rnnsearch", "rnnencdec"), seconds=0.3, train_lengths="1-3", test_lengths="2-4",
                 hidden=8, emb=6)
    assert list(models) == ["rnnsearch", "rnnencdec"]
    for arch, model in models.items():
        assert model.lab.updates >= 1 and sorted(model.lab.by_length) == [2, 3, 4]
        t = model.translate("3 14 7")
        assert t.trace.source_tokens == ["3", "14", "7"] and t._repr_html_()
    assert "heatmap" in models["rnnsearch"].translate("3 14").show("alignment").html
