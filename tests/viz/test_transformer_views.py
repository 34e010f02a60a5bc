"""The Translate page's tabs with a Transformer beside RNNsearch (a tiny random one: these
tests look at what the views show of its layers and heads, not at what it translates)."""
import pytest
from streamlit.testing.v1 import AppTest

from tests.model.transformer_fixtures import save_tiny_transformer

from ..conftest import open_tab, start_app
from .test_translate_page import APP, canvas, type_sentence

LAYERS, HEADS = 2, 3


@pytest.fixture(scope="module")
def transformer_root(checkpoint_dir, tiny_checkpoints, tmp_path_factory):
    """A checkpoint root with the tiny RNNsearch and RNNencdec and a tiny Transformer (2 layers of
    3 heads)."""
    import shutil

    root = tmp_path_factory.mktemp("with_transformer")
    for name in ("rnnsearch-tiny", "rnnencdec-tiny"):
        shutil.copytree(checkpoint_dir / name, root / name)
    save_tiny_transformer(tiny_checkpoints["rnnsearch"], root / "transformer-tiny", seed=5)
    return root


@pytest.fixture
def at(transformer_root, monkeypatch):
    start_app(monkeypatch, "--checkpoints", transformer_root)
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.selectbox(key="model_right").set_value("transformer-tiny").run()
    assert not at.exception, at.exception
    return type_sentence(at, "a dog runs in the park")


def matrices(at) -> list[dict]:
    return canvas(at, "matrix")


def test_the_heatmap_follows_the_layer_and_head_picked(at, transformer_root):
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator

    assert any("Layers and heads." in c.value for c in at.caption)
    first = [m for m in matrices(at) if "transformer-tiny" in m["title"]]
    assert len(first) == 1 and "layer 2, mean of its heads" in first[0]["title"]  # the last layer by default
    at.radio(key="heads_kind").set_value("one").run()
    at.selectbox(key="heads_layer").set_value(1).run()
    at.selectbox(key="heads_head").set_value(3).run()
    assert not at.exception, at.exception
    (one,) = [m for m in matrices(at) if "transformer-tiny" in m["title"]]
    assert "layer 1, head 3" in one["title"] and one["z"] != first[0]["z"]
    translator = Translator.from_checkpoint(transformer_root / "transformer-tiny")
    search = SearchConfig(beam=at.session_state["beam"], length_norm=at.session_state["lp"])
    trace = translator.translate(["a dog runs in the park"], search)[0]
    expected = trace.cross_attention[0, 2]
    assert [[round(v, 4) for v in row] for row in one["z"]] == [[round(float(v), 4) for v in row] for row in expected]


def column_depths(node, depth: int = 0):
    """(how many columns hold it, its data) for each canvas chart under ``node`` of an AppTest tree."""
    import json

    from streamlit.testing.v1.element_tree import Column

    depth += isinstance(node, Column)
    if getattr(node, "type", None) == "bidi_component":
        yield depth, json.loads(node.proto.json)
    for child in getattr(node, "children", {}).values():
        yield from column_depths(child, depth)


def test_every_head_of_a_layer_is_drawn_side_by_side_across_the_page(at):
    at.radio(key="heads_kind").set_value("every").run()
    assert not at.exception, at.exception
    titles = [m["title"] for m in matrices(at)]
    assert [t for t in titles if t.startswith("layer 2, head")] == [f"layer 2, head {h}" for h in (1, 2, 3)]
    assert any(m.value == "**transformer\\-tiny**: every head of layer 2" for m in at.markdown)  # the name escaped
    depths = {data["title"]: depth for depth, data in column_depths(at.main) if data.get("kind") == "matrix"}
    # each head in one column of a grid as wide as the page, not inside the Transformer's half of it
    assert [depths[f"layer 2, head {h}"] for h in (1, 2, 3)] == [1, 1, 1]
    assert depths["rnnsearch-tiny: attention α"] == 1  # RNNsearch keeps its own half


def test_the_shifted_reading_reads_the_next_step(at):
    at.radio(key="heads_kind").set_value("one").run()
    plain = [m for m in matrices(at) if "transformer-tiny" in m["title"]][0]
    at.toggle(key="heads_shifted").set_value(True).run()
    assert not at.exception, at.exception
    (shifted,) = [m for m in matrices(at) if "transformer-tiny" in m["title"]]
    assert shifted["title"].endswith(", shifted") and len(shifted["z"]) == len(plain["z"])
    assert all(abs(sum(row) - 1) < 1e-4 for row in shifted["z"])
    # row i of the shifted reading is row i + 1 of the plain one wherever both exist
    for row, later in zip(shifted["z"][:-1], plain["z"][1:]):
        assert [round(v, 4) for v in row] == [round(v, 4) for v in later]


@pytest.mark.parametrize("tab", ["Step by step", "Beam tree", "What if", "Explanations", "Teacher forcing",
                                 "Downloads"])
def test_every_tab_opens_with_the_transformer(at, tab):
    for key in ("step_model", "beam_model", "whatif_model"):
        if key in at.session_state:
            at.session_state[key] = "transformer-tiny"
    open_tab(at, tab)
    if tab == "Step by step":
        at.radio(key="step_model").set_value("transformer-tiny").run()
        assert not at.exception, at.exception
        (layers,) = [m for m in matrices(at) if m["title"].startswith("every layer's cross-attention")]
        assert layers["y_labels"] == ["layer 1", "layer 2"] and layers["y_title"] == "decoder layer"
        assert [m for m in canvas(at) if m.get("title") == "attention at step 1: layer 2, mean of its heads"]
    if tab == "What if":
        at.radio(key="whatif_model").set_value("transformer-tiny").run()
        at.radio(key="whatif_mode").set_value("the attention").run()
        assert not at.exception, at.exception
        assert any("replaces every head's weights in layer 2" in c.value for c in at.caption)



def test_the_alignment_page_draws_the_layer_by_head_grid_in_both_readings(transformer_root, tmp_path, monkeypatch):
    from .test_alignment_page import EN, FR, WA, _script

    for suffix, text in ((".en", EN), (".fr", FR), (".wa", WA)):
        (tmp_path / f"toy{suffix}").write_text(text)
    settings = start_app(monkeypatch, "--checkpoints", transformer_root, "--align-dir", tmp_path)
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    at.multiselect(key="align_models").set_value(["rnnsearch-tiny", "transformer-tiny"]).run()
    at.multiselect(key="align_methods").set_value(["attention", "diagonal", "heads"]).run()
    at.button(key="align_run").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert "heads" not in set(table["method"])  # the heads have their grid, not 32 rows of the table
    assert ("transformer-tiny", "attention") in set(zip(table["model"], table["method"]))
    grids = [m for m in matrices(at) if m["title"].startswith("AER")]
    assert len(grids) == 2 and all(len(g["z"]) == LAYERS and len(g["z"][0]) == HEADS + 1 for g in grids)
    assert grids[0]["x_labels"] == ["head 1", "head 2", "head 3", "mean"]
    assert all(0 <= v <= 1 for g in grids for row in g["z"] for v in row)
    (best,) = [c.value for c in at.caption if c.value.startswith("Best: layer")]
    attention = table[(table["model"] == "transformer-tiny") & (table["method"] == "attention")]["AER"].iloc[0]
    assert f"show: AER {attention:.3f}" in best
    assert grids[0]["z"][LAYERS - 1][HEADS] == pytest.approx(attention, abs=1e-3)  # last layer's mean is the default


def test_the_explanations_tab_gives_each_layer_a_faithfulness_row(at):
    open_tab(at, "Explanations")
    assert "layers" in at.multiselect(key="explain_methods").value
    (table,) = [d.value for d in at.dataframe if "attention, layer 1" in list(d.value.iloc[:, 0])]
    assert {"attention, layer 1", "attention, layer 2", "random order"} <= set(table.iloc[:, 0])


def test_the_evaluate_page_scores_three_models_with_one_length_chart(transformer_root, monkeypatch):
    from .test_evaluate_page import REF, SRC, _script, upload

    settings = start_app(monkeypatch, "--checkpoints", transformer_root, "--data-dir", "/nonexistent")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    three = ["rnnsearch-tiny", "rnnencdec-tiny", "transformer-tiny"]
    upload(at, SRC.encode(), REF.encode())
    at.multiselect(key="eval_models").set_value(three).run()
    at.button(key="eval_run").click().run()
    assert not at.exception, at.exception
    assert list(at.dataframe[0].value["model"]) == three
    (chart,) = canvas(at, "lines")
    assert [line["name"] for line in chart["lines"]] == three
    at.number_input(key="eval_faith_n").set_value(2).run()
    at.button(key="eval_faith_run").click().run()
    assert not at.exception, at.exception
    tables = [d.value for d in at.dataframe if "deletion (lower is better)" in d.value.columns]
    assert len(tables) == 3 and {"attention, layer 1", "attention, layer 2"} <= set(tables[2]["method"])


@pytest.mark.parametrize("param, title", [("1.3s", "layer 1, head 3, shifted"), ("2", "layer 2, mean of its heads"),
                                          ("0.2", "layer 2, head 2"), ("9.9", "layer 2, head 3")])
def test_a_link_reopens_the_layer_and_head_and_the_page_writes_them_back(transformer_root, monkeypatch, param, title):
    start_app(monkeypatch, "--checkpoints", transformer_root)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(src="a dog runs", right="transformer-tiny", heads=param)
    at.run()
    assert not at.exception, at.exception
    (shown,) = [m for m in matrices(at) if "transformer-tiny" in m["title"]]
    assert shown["title"].endswith(title)
    at.radio(key="heads_kind").set_value("every").run()
    assert at.query_params["heads"].endswith(".all" + ("s" if param.endswith("s") else ""))


@pytest.mark.parametrize("param", ["x", "1.0", "1.3.4", "123", "-1", "1.alls"[:3] + "x"])
def test_a_malformed_heads_parameter_falls_back_with_a_notice(transformer_root, monkeypatch, param):
    start_app(monkeypatch, "--checkpoints", transformer_root)
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(src="a dog runs", right="transformer-tiny", heads=param)
    at.run()
    assert not at.exception, at.exception
    assert any("'heads' value was not usable" in w.value for w in at.warning)
    (shown,) = [m for m in matrices(at) if "transformer-tiny" in m["title"]]
    assert "layer 2, mean of its heads" in shown["title"]


LAYERWISE = {"alti_plus": "ALTI+ (through every layer)", "value_zeroing": "value zeroing",
             "rollout": "attention rollout"}  # the methods that take a Transformer apart, by label


def decoded(at, transformer_root, name="transformer-tiny"):
    """``name``'s translator and its decode of the page's sentence with the page's search."""
    from model.decoding.search import SearchConfig
    from model.decoding.translator import Translator

    translator = Translator.from_checkpoint(transformer_root / name)
    search = SearchConfig(beam=at.session_state["beam"], length_norm=at.session_state["lp"])
    return translator, translator.translate([at.session_state["source"]], search)[0]


def test_the_explanations_tab_explains_layer_by_layer_for_a_transformer_and_says_why_not_for_an_rnn(at, transformer_root):
    from model.explaining import registry

    open_tab(at, "Explanations")
    picker = at.multiselect(key="explain_methods")
    assert set(LAYERWISE.values()) <= set(picker.options)
    picker.set_value([*LAYERWISE, "gradient_x_input"]).run()
    assert not at.exception, at.exception
    how = " ".join(m.value for m in at.markdown)  # the tab's "how to read this"
    for said in ("Ferrando et al. 2022", "c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁)", "Mohebbi et al. 2023",
                 "Abnar & Zuidema 2020", "How faithful each is"):
        assert said in how, said
    rnn, transformer = [d.value for d in at.dataframe if "deletion (lower is better)" in d.value.columns]
    assert set(transformer.iloc[:, 0]) == {*LAYERWISE.values(), "gradient × input", "random order"}
    assert set(rnn.iloc[:, 0]) == {"gradient × input", "random order"}  # RNNsearch: none of the three...
    (why,) = [c.value for c in at.caption if "cannot use" in c.value]  # ...and one line saying why
    assert why.startswith("rnnsearch\\-tiny cannot use ALTI+ (through every layer), value zeroing, attention "
                          "rollout: each ") and registry.UNSUPPORTED in why
    # the source / prefix split of the method shown (the first chosen, ALTI+) is ALTI+'s of this decode
    translator, trace = decoded(at, transformer_root)
    expected = registry.explain(translator.model, trace.source_ids, trace.target_ids, ["alti_plus"])["alti_plus"]
    (split,) = [s for s in canvas(at, "stacks") if s["title"].startswith("transformer-tiny:")]
    assert [round(v, 3) for v in split["values"][0]] == [round(float(v), 3) for v in expected.shares()[:, 0]]
    assert split["values"][1][0] == 0  # the first word has no words written before it


def test_the_step_tab_reads_the_written_word_at_every_decoder_layer(at, transformer_root):
    import numpy as np

    from model.explaining.logit_lens import logit_lens

    open_tab(at, "Step by step")
    at.radio(key="step_model").set_value("transformer-tiny").run()
    at.slider(key="step").set_value(2).run()
    assert not at.exception, at.exception
    (table,) = [d.value for d in at.dataframe if "the layer's first choices" in d.value.columns]
    translator, trace = decoded(at, transformer_root)
    lens = logit_lens(translator.model, trace.source_ids, trace.target_ids)
    assert list(table["decoder layer"]) == list(range(1, LAYERS + 1))
    assert list(table["rank"]) == [int(r) for r in lens.ranks[:, 1]]  # step 2's column, not step 1's
    # the last layer's reading is the model's own distribution: the probability the decode gave the word
    assert table["probability"].iloc[-1] == pytest.approx(float(np.exp(trace.step_logprobs[1])), abs=2e-3)
    firsts = [row.split(", ")[0].rsplit(" ", 1)[0] for row in table["the layer's first choices"]]
    assert firsts == [translator.tgt_vocab.pieces([lens.top_ids[k, 1, 0]])[0].replace("▁", "") or "▁"
                      for k in range(LAYERS)]
    assert any("never trained to be read this way" in c.value for c in at.caption)
    at.radio(key="step_model").set_value("rnnsearch-tiny").run()
    assert not at.exception, at.exception
    assert not [d for d in at.dataframe if "the layer's first choices" in d.value.columns]  # an RNN: nothing more
    assert not any("logit lens" in c.value for c in at.caption)


def test_the_evaluate_page_offers_the_layerwise_methods_and_says_why_an_rnn_has_no_row(transformer_root, monkeypatch):
    from .test_evaluate_page import REF, SRC, _script, upload

    settings = start_app(monkeypatch, "--checkpoints", transformer_root, "--data-dir", "/nonexistent")
    at = AppTest.from_function(_script, args=(settings,), default_timeout=120).run()
    upload(at, SRC.encode(), REF.encode())
    at.multiselect(key="eval_models").set_value(["rnnencdec-tiny", "transformer-tiny"]).run()
    at.button(key="eval_run").click().run()
    picker = at.multiselect(key="eval_faith_methods")
    assert set(LAYERWISE.values()) <= set(picker.options)
    picker.set_value(["rollout", "occlusion"]).run()
    at.number_input(key="eval_faith_n").set_value(2).run()
    at.button(key="eval_faith_run").click().run()
    assert not at.exception, at.exception
    rnn, transformer = [d.value for d in at.dataframe if "deletion (lower is better)" in d.value.columns]
    assert set(transformer["method"]) == {"attention rollout", "occlusion", "random order"}
    assert set(rnn["method"]) == {"occlusion", "random order"}
    assert [c.value for c in at.caption if "cannot use" in c.value] == [
        next(c.value for c in at.caption if c.value.startswith("rnnencdec\\-tiny cannot use attention rollout: each "))]
