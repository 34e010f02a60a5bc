"""The sentence map drawn without plotly (viz/pages/parts/point_map.py) from what
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
    from viz.pages.parts.point_map import point_map_ui

    st.session_state.setdefault("chart_format", "png")
    point_map_ui(sentence_map_layers(np.zeros((3, 2)), ["one", "two", text], np.ones(2), text, [2], text),
                 key="space_map_a b/../c")


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_the_page_gets_its_text_as_data_never_as_markup(fmt):
    from viz.pages.parts import point_map

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
    from viz.pages.parts.point_map import _JS

    assert "innerHTML" not in _JS and "insertAdjacentHTML" not in _JS and "eval(" not in _JS
    assert "tip.textContent = found[0]" in _JS and ">${esc(s)}</text>" in _JS
