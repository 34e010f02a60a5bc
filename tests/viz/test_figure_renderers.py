"""One figure description per chart, its renderers adapters over it: a heatmap
(viz/figures/heatmap.py · ``MatrixFigure``) drawn three ways, by the pages' canvas (what
canvas_charts.py sends the browser), by plotly (``plotly_matrix``) and by matplotlib
(print_figures.py · ``print_matrix``), carries the same numbers and the same labels."""
import html
import json

import numpy as np
import pytest

from viz.figures.heatmap import alignment_matrix, plotly_matrix
from viz.pages.parts.canvas_charts import chart_data

SRC = ["▁the", "▁<b>dog</b>", "$x$", "▁"]
TGT = ["▁le", "▁chien", "▁&", "s", "</s>"]


@pytest.fixture
def figure():
    matrix = np.random.default_rng(11).dirichlet(np.ones(len(SRC)), size=len(TGT))  # (5 outputs, 4 sources)
    return alignment_matrix(matrix, SRC, TGT, title="a & b", grayscale=True, zmax=0.8)


def test_the_canvas_gets_the_figures_numbers_and_labels(figure):
    data = json.loads(json.dumps(chart_data(figure, "heatmap", "png")))  # what the browser receives
    assert data["kind"] == "matrix" and data["z"] == [list(row) for row in figure.z]
    assert (data["x_labels"], data["y_labels"]) == (list(figure.x_labels), list(figure.y_labels))
    assert (data["title"], data["zmax"], data["palette"]) == ("a & b", 0.8, "greys")


def test_plotly_draws_the_same_numbers_and_labels(figure):
    drawn = plotly_matrix(figure)
    trace = drawn.data[0]
    np.testing.assert_array_equal(np.asarray(trace.z), np.asarray(figure.z))
    assert [html.unescape(t) for t in drawn.layout.xaxis.ticktext] == list(figure.x_labels)
    assert [html.unescape(t) for t in drawn.layout.yaxis.ticktext] == list(figure.y_labels)
    assert "<b>" not in "".join(drawn.layout.xaxis.ticktext)  # user text never read as markup
    assert (trace.zmax, drawn.layout.title.text) == (0.8, "a & b")


def test_matplotlib_draws_the_same_numbers_and_labels(figure):
    pytest.importorskip("matplotlib")
    from viz.figures.print_figures import print_matrix

    drawn = print_matrix(figure)
    (ax,) = drawn.axes
    cells = np.asarray(ax.collections[0].get_array()).reshape(len(figure.y_labels), len(figure.x_labels))
    np.testing.assert_allclose(cells, np.asarray(figure.z))
    shown = lambda labels: [t.get_text().replace(r"\$", "$") for t in labels]  # noqa: E731  mathtext escaped
    assert shown(ax.get_xticklabels()) == list(figure.x_labels)
    assert shown(ax.get_yticklabels()) == list(figure.y_labels)
    assert ax.collections[0].norm.vmax == 0.8 and ax.get_title() == "a & b"


def test_a_beam_tree_is_one_description_for_the_canvas_and_plotly():
    from viz.figures.beam_tree import beam_tree, plotly_tree

    nodes = [dict(id=0, parent=None, step=0, token="<s>", score=0.0, norm_score=0.0, status="best"),
             dict(id=1, parent=0, step=1, token="▁le", score=-0.1, norm_score=-0.1, status="best"),
             dict(id=2, parent=0, step=1, token="▁<i>un</i>", score=-2.3, norm_score=-2.3, status="pruned"),
             dict(id=3, parent=1, step=2, token="▁chat", score=-0.4, norm_score=-0.2, status="kept")]
    tree = beam_tree(nodes, "beam")
    data = json.loads(json.dumps(chart_data(tree, "beam", "svg")))
    drawn = plotly_tree(tree)
    markers = [t for t in drawn.data if t.mode == "markers+text"]
    plotted = {int(c[0]): (x, y, html.unescape(c[1])) for t in markers for c, x, y in zip(t.customdata, t.x, t.y)}
    canvas = {i: (s, r, label) for i, s, r, label in zip(data["ids"], data["steps"], data["rows"], data["labels"])}
    assert plotted == canvas and canvas[2][2] == "<i>un</i>"
    assert all("<i>" not in c[1] for t in markers for c in t.customdata)  # escaped for plotly


def test_line_panels_are_one_description_for_the_canvas_and_plotly():
    from viz.figures.lines import Line, LinesFigure, plotly_panels

    lines = (Line("RNNsearch", "#1f77b4", (10.0, 20.0, 30.0), (25.0, 24.5, 22.0),
                  band=((20.0, 21.0, 19.0), (27.0, 26.0, 25.0))),
             Line("RNNencdec", "#d62728", (10.0, 20.0, 30.0), (22.0, 17.5, 11.0), dashed=True))
    panels = (LinesFigure("t", "length", "BLEU", lines, subtitle="first"), LinesFigure("t", "length", "BLEU", lines,
                                                                                   subtitle="second"))
    drawn = plotly_panels(panels)
    shown = [t for t in drawn.data if t.mode == "lines+markers"]
    assert [(t.name, tuple(t.x), tuple(t.y), t.xaxis) for t in shown] == [
        (line.name, line.x, line.y, axis) for line in lines for axis in ("x", "x2")]
    bands = [tuple(t.y) for t in drawn.data if t.mode == "lines" and t.xaxis == "x"]
    assert bands == [lines[0].band[1], lines[0].band[0]]  # upper edge, then the lower filled up to it
    assert [a.text for a in drawn.layout.annotations] == ["first", "second"]
    canvas = json.loads(json.dumps(chart_data(panels[0], "lines", "png")))
    assert [(drawn_line["name"], drawn_line["x"], drawn_line["y"], drawn_line["band"]) for drawn_line in canvas["lines"]] == [
        (line.name, list(line.x), list(line.y), [list(b) for b in line.band]) for line in lines]


def test_matplotlib_draws_a_line_charts_numbers_and_names():
    pytest.importorskip("matplotlib")
    from viz.figures.lines import Line, LinesFigure
    from viz.figures.print_figures import print_lines

    lines = (Line("RNNsearch-$50$", "#1f77b4", (10.0, 20.0, 30.0), (25.0, 24.5, 22.0)),
             Line("RNNencdec", "#d62728", (10.0, 20.0, 30.0), (22.0, 17.5, 11.0), dashed=True))
    (ax,) = print_lines(LinesFigure("BLEU", "length", "BLEU score", lines, from_zero=True)).axes
    drawn = [(h.get_label().replace(r"\$", "$"), tuple(h.get_xdata()), tuple(h.get_ydata())) for h in ax.get_lines()]
    assert drawn == [(line.name, line.x, line.y) for line in lines]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_ylim()[0]) == ("length", "BLEU score", 0.0)
