"""The sentence map drawn without plotly (viz/pages/parts/canvas_charts.py) from what
viz/figures/sentence_space.py says it holds; the notebook's plotly figure holds the same points."""
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from viz.figures.sentence_space import DIGITS, SHOWN, shown_rows, sentence_map, sentence_map_layers

HOSTILE = "</script><img src=x onerror=alert(1)> & \"quotes\""


@pytest.mark.parametrize("n", [0, 1, 7, SHOWN, SHOWN + 5])
def test_the_map_draws_at_most_SHOWN_rows_spread_over_the_sample(n):
    rows = shown_rows(n)
    assert len(rows) == min(n, SHOWN) and list(rows) == sorted(set(rows.tolist()))
    if n:
        assert rows[0] == 0 and rows[-1] == n - 1


def _points(n=7, seed=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)), [f"sentence {i}" for i in range(n)]


def test_the_layers_hold_the_sample_the_neighbours_and_the_users_sentence():
    points, sentences = _points()
    found = sentence_map_layers(points, sentences, np.array([0.123456, -2.5]), "mine", [5, 2], "title")
    training, nearest, yours = found.layers
    assert [layer.name for layer in found.layers] == ["training sentences", "nearest", "yours"]
    assert training.texts == tuple(sentences) and np.allclose(training.x, points[:, 0], atol=10 ** -DIGITS)
    assert np.allclose(training.y, points[:, 1], atol=10 ** -DIGITS)
    assert nearest.texts == ("sentence 5", "sentence 2") and nearest.x == tuple(np.round(points[[5, 2], 0], DIGITS))
    assert (yours.x, yours.y, yours.texts, yours.symbol) == ((0.1235,), (-2.5,), ("mine",), "x")
    assert found.title == "title" and found.x_title == "first principal axis"


def test_no_neighbours_is_an_empty_layer():
    points, sentences = _points(5)
    nearest = sentence_map_layers(points, sentences, np.zeros(2), "mine", []).layers[1]
    assert nearest.x == nearest.y == nearest.texts == ()


def test_the_notebooks_plotly_figure_holds_the_same_points():
    points, sentences = _points()
    found = sentence_map_layers(points, sentences, np.ones(2), "mine", [1])
    fig = sentence_map(points, sentences, np.ones(2), "mine", [1])
    assert [(t.name, tuple(t.x), tuple(t.y), tuple(t.text)) for t in fig.data] == \
        [(layer.name, layer.x, layer.y, layer.texts) for layer in found.layers]
    assert fig.data[2].marker.symbol == "x" and fig.data[0].marker.symbol is None


def _page(text):
    import numpy as np
    import streamlit as st

    from viz.figures.sentence_space import sentence_map_layers
    from viz.pages.parts.canvas_charts import chart_ui

    st.session_state.setdefault("chart_format", "png")
    chart_ui(sentence_map_layers(np.zeros((3, 2)), ["one", "two", text], np.ones(2), text, [2], text),
                 key="space_map_a b/../c")


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_the_page_gets_its_text_as_data_never_as_markup(fmt):
    from viz.pages.parts import canvas_charts as point_map

    at = AppTest.from_function(_page, args=(HOSTILE,), default_timeout=60)
    at.session_state["chart_format"] = fmt
    at.run()
    assert not at.exception, at.exception
    (element,) = at.get("bidi_component")
    proto = element.proto
    assert (proto.html_content, proto.css_content, proto.js_content) == (point_map._HTML, point_map._CSS, point_map._JS)
    data = json.loads(proto.json)
    assert data["title"] == HOSTILE and data["layers"][1]["texts"] == [HOSTILE] == data["layers"][2]["texts"]
    assert data["download"] == {"format": fmt, "filename": "space_map_a_b_c", "scale": 2,
                                "label": f"Download {fmt.upper()}"}


def test_the_script_writes_text_only_as_text():
    """What the script puts in the page: the hover, the legend and the button by textContent, the
    SVG download through its escaper; never innerHTML."""
    from viz.pages.parts.canvas_charts import _JS

    assert "innerHTML" not in _JS and "insertAdjacentHTML" not in _JS and "eval(" not in _JS
    assert "tip.textContent = found[0]" in _JS and ">${esc(s)}</text>" in _JS


SRC, TGT = ["▁<b>a</b>", "▁dog", "s"], ["▁un", "▁chien", "s", "▁&", "</s>"]


def test_the_canvas_heatmap_holds_what_the_plotly_one_shows_with_tokens_as_plain_text():
    from viz.figures.heatmap import alignment_heatmap, alignment_matrix

    m = np.random.default_rng(5).dirichlet(np.ones(3), size=5)  # (5 outputs, 3 sources)
    found = alignment_matrix(m, SRC, TGT, title="t", grayscale=True)
    plotly_trace = alignment_heatmap(m, SRC, TGT, grayscale=True).data[0]
    assert np.allclose(found.z, plotly_trace.z, atol=1e-6) and len(found.z) == 5 and len(found.z[0]) == 3
    assert found.x_labels == ("<b>a</b>", "dog", "s") and found.y_labels == ("un", "chien", "s", "&", "</s>")
    assert plotly_trace.x == (0, 1, 2)  # plotly's labels are escaped ticks; the canvas's are the text itself
    assert (found.palette, found.zmax, found.value_name, found.links) == ("greys", 1.0, "weight", ())
    assert alignment_matrix(m, SRC, TGT).palette == "blues"


def test_links_are_added_sorted_to_a_new_figure():
    from viz.figures.heatmap import alignment_matrix, with_links

    plain = alignment_matrix(np.eye(3), SRC, TGT[:3])
    linked = with_links(plain, [(2, 1), (0, 0)], "eflomal links")
    assert plain.links == () and [(k.name, k.cells) for k in linked.links] == [("eflomal links", ((0, 0), (2, 1)))]


def _heatmap_page(tokens):
    import numpy as np

    from viz.figures.heatmap import alignment_matrix
    from viz.pages.parts.canvas_charts import chart_ui

    chart_ui(alignment_matrix(np.full((2, len(tokens)), 1 / len(tokens)), tokens, ["▁x", "</s>"]), key="heatmap_m")


def test_a_heatmaps_tokens_reach_the_page_as_data():
    from viz.pages.parts import canvas_charts

    at = AppTest.from_function(_heatmap_page, args=([HOSTILE, "▁b"],), default_timeout=60).run()
    assert not at.exception, at.exception
    (element,) = at.get("bidi_component")
    assert element.proto.js_content == canvas_charts._JS and HOSTILE not in element.proto.html_content
    data = json.loads(element.proto.json)
    assert data["kind"] == "matrix" and data["x_labels"] == [HOSTILE, "b"] and data["y_labels"] == ["x", "</s>"]
    assert data["hover"] == {"x": "source", "y": "target"} and data["download"]["filename"] == "heatmap_m"


def test_the_answer_key_marks_sure_possible_only_and_picked_links():
    from viz.figures.heatmap import answer_key_matrix

    m = np.arange(6, dtype=float).reshape(2, 3)  # (2 target words, 3 source words)
    key = answer_key_matrix(m, ["a", "b", "c"], ["x", "y"], sure=[(0, 0), (2, 1)], possible=[(0, 0), (1, 1)],
                            predicted=[(1, 1), (0, 0)], title="t", value_name="saliency")
    assert [(k.name, k.cells, k.shape) for k in key.links] == [
        ("gold: sure", ((0, 0), (2, 1)), "square"), ("gold: possible", ((1, 1),), "ring"),  # a sure link is not
        ("picked", ((0, 0), (1, 1)), "cross")]  # drawn twice
    assert key.zmax is None and key.value_name == "saliency" and key.z == ((0, 1, 2), (3, 4, 5))


def _bars_page(tokens):
    from model.decoding.trace import Candidate
    from viz.figures.decoding_step import topk_bar
    from viz.pages.parts.canvas_charts import chart_ui

    chart_ui(topk_bar([Candidate(t, k, 0.5 / (k + 1)) for k, t in enumerate(tokens)], chosen=1), key="step_topk")


def test_bars_reach_the_page_as_data():
    from viz.pages.parts import canvas_charts

    at = AppTest.from_function(_bars_page, args=(["▁le", HOSTILE],), default_timeout=60).run()
    assert not at.exception, at.exception
    (element,) = at.get("bidi_component")
    assert element.proto.js_content == canvas_charts._JS
    data = json.loads(element.proto.json)
    assert data["kind"] == "bars" and data["labels"] == ["le", HOSTILE] and data["values"] == [0.5, 0.25]
    assert data["horizontal"] and data["value_title"] == "probability" and data["download"]["filename"] == "step_topk"


def _tree_page():
    import streamlit as st

    from viz.figures.beam_tree import beam_tree
    from viz.pages.parts.canvas_charts import chart_ui

    nodes = [{"id": i, "parent": None if i == 0 else 0, "step": min(i, 1), "token": f"▁t{i}", "score": -i,
              "norm_score": -i, "status": "best" if i < 2 else "pruned"} for i in range(5)]
    st.session_state["picked"] = chart_ui(beam_tree(nodes, "tree"), key="beam_tree_m")


@pytest.mark.parametrize("sent, picked", [(3, 3), (0, 0), (None, None), (9, None), (-1, None), ("3", None),
                                          (3.0, None), (True, None), ([3], None)])
def test_a_picked_node_counts_only_when_it_is_one_of_the_trees_ids(sent, picked, monkeypatch):
    """What the browser sends for a click is the user's input: anything else than a node's id is ignored."""
    from viz.pages.parts import canvas_charts

    class Answer:  # the component's result, as if the browser had sent ``sent`` for the click
        pass

    Answer.picked = sent
    monkeypatch.setattr(canvas_charts, "_chart", lambda: (lambda **kwargs: Answer()))
    at = AppTest.from_function(_tree_page, default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.session_state["picked"] == picked
