"""Figure builders on small arrays: labels, cell values, node counts, escaping."""
import numpy as np
import pytest

from model.cards.schema import StressRow, ValidationRecord
from model.decoding.trace import Candidate
from model.scoring.word_alignment import AlignmentFormatError, parse_links, word_spans
from viz.figures.beam_tree import beam_tree, beam_tree_figure, tree_layout
from viz.figures.decoding_step import energies_bar, source_strip, topk_bar
from viz.figures.heatmap import alignment_heatmap, merge_to_words, pharaoh
from viz.figures.length_chart import stress_lines
from viz.figures.training_curves import training_curves

SRC = ["▁The", "▁black", "▁do", "g", "."]
TGT = ["▁Le", "▁chi", "en", "▁noir", "</s>"]


def attention(rows=5, cols=5, seed=0):
    m = np.random.default_rng(seed).random((rows, cols))
    return m / m.sum(1, keepdims=True)


def test_heatmap_axes_carry_tokens_and_values_sit_in_their_cells():
    m = attention(5, 5)
    fig = alignment_heatmap(m, SRC, TGT)
    heat = fig.data[0]
    assert list(fig.layout.xaxis.ticktext) == ["The", "black", "do", "g", "."]
    assert list(fig.layout.yaxis.ticktext) == ["Le", "chi", "en", "noir", "&lt;/s&gt;"]
    np.testing.assert_allclose(np.array(heat.z), m)
    assert heat.customdata[3][1] == ["black", "noir"]  # row 3 (noir), column 1 (black)


def test_repeated_tokens_stay_separate_cells():
    fig = alignment_heatmap(np.eye(3), ["▁a", "▁a", "▁a"], ["▁b", "▁b", "▁b"])
    assert list(fig.data[0].x) == [0, 1, 2] and list(fig.data[0].y) == [0, 1, 2]


def test_user_text_is_escaped_in_labels():
    fig = alignment_heatmap(np.ones((1, 2)) / 2, ["▁<script>alert(1)</script>", "▁<img"], ["</s>"])
    assert all("<" not in label for label in fig.layout.xaxis.ticktext)


@pytest.mark.parametrize("pieces,spans", [
    (["▁The", "▁black", "▁do", "g", "."], [(0, 1), (1, 2), (2, 5)]),  # words are whitespace-delimited
    (["▁Le", "▁chi", "en", "</s>"], [(0, 1), (1, 3), (3, 4)]),
    (["abc", "▁d"], [(0, 1), (1, 2)]),
    ([], []),
])
def test_word_spans(pieces, spans):
    assert word_spans(pieces) == spans


def test_merge_sums_source_pieces_and_averages_target_pieces():
    m = attention(5, 5)
    merged, src_words, tgt_words = merge_to_words(m, SRC, TGT)
    assert src_words == ["The", "black", "dog."]
    assert tgt_words == ["Le", "chien", "noir", "</s>"]
    assert merged.shape == (4, 3)
    assert merged[1, 2] == pytest.approx(m[1:3, 2:5].sum(1).mean())  # "chien" x "dog."
    assert merged[3, 0] == pytest.approx(m[4, 0])
    np.testing.assert_allclose(merged.sum(1), 1.0)


def test_pharaoh_round_trip():
    m = np.array([[0.1, 0.9, 0.0], [0.7, 0.2, 0.1], [0.2, 0.2, 0.6]])
    text = pharaoh(m)
    assert text == "1-0 0-1"
    assert parse_links(text) == {(1, 0), (0, 1)}
    with pytest.raises(AlignmentFormatError, match="'1-x' is not an i-j link"):
        parse_links("1-x")


def tree_nodes():
    statuses = ["best", "best", "kept", "pruned", "best", "finished", "pruned"]
    parents = [None, 0, 0, 0, 1, 2, 2]
    steps = [0, 1, 1, 1, 2, 2, 2]
    return [{"id": i, "parent": p, "step": s, "token": f"▁t{i}", "score": -float(i), "norm_score": -i / 2,
             "status": st} for i, (p, s, st) in enumerate(zip(parents, steps, statuses))]


def test_beam_tree_has_one_marker_per_node_and_ids_in_customdata():
    nodes = tree_nodes()
    fig = beam_tree_figure(nodes)
    markers = [t for t in fig.data if t.mode == "markers+text"]
    ids = sorted(int(c[0]) for t in markers for c in t.customdata)
    assert ids == list(range(len(nodes)))
    best = next(t for t in markers if t.name == "best path")
    assert sorted(int(c[0]) for c in best.customdata) == [0, 1, 4]
    assert [int(x) for x in best.x] == [0, 1, 2]


def test_beam_tree_without_pruned_nodes():
    nodes = [n for n in tree_nodes() if n["status"] != "pruned"]
    fig = beam_tree_figure(nodes)
    ids = sorted(int(c[0]) for t in fig.data if t.mode == "markers+text" for c in t.customdata)
    assert ids == [0, 1, 2, 4, 5]
    edges = [x for x in fig.data[0].x if x is not None] + [x for x in fig.data[1].x if x is not None]
    assert len(edges) == 2 * (len(nodes) - 1)


@pytest.mark.parametrize("keep", [lambda n: True, lambda n: n["status"] != "pruned"])
def test_the_pages_beam_tree_holds_the_plotly_trees_nodes_and_edges(keep):
    """The canvas tree (``TreeFigure``) and the plotly one draw the same nodes at the same places."""
    nodes = [n for n in tree_nodes() if keep(n)]
    tree, fig = beam_tree(nodes, "t"), beam_tree_figure(nodes, "t")
    markers = [t for t in fig.data if t.mode == "markers+text"]
    plotly_at = {int(c[0]): (x, y) for t in markers for c, x, y in zip(t.customdata, t.x, t.y)}
    assert {i: (s, r) for i, s, r in zip(tree.ids, tree.steps, tree.rows)} == plotly_at
    assert sorted(i for i, st in zip(tree.ids, tree.statuses) if st == "best") == [0, 1, 4]
    assert [tree.ids[p] if p >= 0 else None for p in tree.parents] == [n["parent"] for n in nodes]
    four = tree.ids.index(4)
    assert tree.labels[four] == "t4" and tree.hovers[four].splitlines() == ["token: t4", "step: 2", "log p: -4.000",
                                                                            "normalised: -2.000"]
    assert [s[0] for s in tree.styles] == ["pruned", "kept", "finished", "best"]  # drawn in this order


def test_a_trees_node_whose_parent_was_left_out_is_a_root():
    nodes = [n for n in tree_nodes() if n["id"] != 2]  # node 2 (parent of 5 and 6) filtered away
    tree = beam_tree(nodes)
    assert [tree.ids[k] for k, p in enumerate(tree.parents) if p < 0] == [0, 5, 6]


def test_tree_layout_puts_parents_between_children():
    y = tree_layout([n["parent"] for n in tree_nodes()])
    assert y[4] == y[1] and min(y[5], y[6]) <= y[2] <= max(y[5], y[6])
    assert len(set(y[i] for i in (3, 4, 5, 6))) == 4  # leaves never overlap
    deep = tree_layout([None] + list(range(5000)))  # a chain deeper than the recursion limit
    assert len(deep) == 5001


def test_step_figures():
    strip = source_strip(np.array([0.2, 0.8]), ["▁a", "▁<b>"])  # tokens as text: the page writes them as text
    assert strip.x_labels == ("a", "<b>") and strip.z == ((0.2, 0.8),) and strip.zmax == 0.8
    bars = energies_bar(np.array([1.0, -2.0, 0.5]), ["▁x", "▁y", "▁z"])
    assert bars.values == (1.0, -2.0, 0.5) and bars.labels == ("x", "y", "z") and not bars.horizontal
    cands = [Candidate("▁le", 7, 0.6), Candidate("▁la", 9, 0.3)]
    top = topk_bar(cands, chosen=9)
    assert top.values == (0.6, 0.3) and top.colors[1] == "#d62728" and top.horizontal
    assert top.value_range == (0.0, 1.0) and top.colors[0] != top.colors[1]


def test_training_curves():
    log = [ValidationRecord(step=50, epoch=1, train_loss=3.0, val_loss=2.5, val_bleu=10.0),
           ValidationRecord(step=100, epoch=2, train_loss=2.0, val_loss=2.2, val_bleu=20.0)]
    fig = training_curves(log)
    assert [list(t.y) for t in fig.data] == [[3.0, 2.0], [2.5, 2.2], [10.0, 20.0]]
    assert list(fig.data[0].x) == [50, 100]  # against updates, not epochs


def test_report_charts_cli(tmp_path, capsys):
    """python -m viz.commands.length_chart draws a model.evaluate report's charts from its JSON files."""
    import json

    from viz.commands.length_chart import main

    rows = [{"model": "a", "lo": 1, "hi": 10, "label": "1-10", "count": 3, "bleu": 20.0, "ci95": 1.0}]
    (tmp_path / "scores.json").write_text(json.dumps({"bleu_by_length": rows}))
    assert main([str(tmp_path)]) == 0
    page = (tmp_path / "length_chart.html").read_text()
    assert "Plotly.newPlot" in page and '<script src="https://cdn.plot.ly' not in page  # plotly.js inlined
    assert '"name":"a"' in page.replace(" ", "") and "1-10" in page  # the report's model and bucket
    assert not (tmp_path / "stress_chart.html").exists()
    assert main([str(tmp_path / "missing")]) == 2 and "holds no scores.json" in capsys.readouterr().err


def test_stress_chart_gives_each_of_seven_models_its_own_colour():
    rows = [StressRow(k=k, items=9 // k, source_words=3.0 * k, bleu=40.0 - k, length_ratio=1.0) for k in (1, 2, 3)]
    fig = stress_lines({f"model-{i}": rows for i in range(7)}, "stress")
    assert [t.name for t in fig.lines] == [f"model-{i}" for i in range(7)]
    assert len({t.color for t in fig.lines}) == 7


def test_the_pages_curve_panels_hold_the_plotly_figures_lines():
    from model.explaining.faithfulness import Curves
    from viz.figures.faithfulness_curves import curve_panels, faithfulness_curves

    counts = np.array([0, 1, 2, 3, 5, 7])
    falling = Curves(counts, -np.arange(6.0), np.arange(6.0) - 5)
    flat = Curves(counts, np.full(6, -2.0), np.full(6, -2.0))
    curves, names = {"occlusion": falling, "attention": flat}, {"occlusion": "occlusion (leave out)"}
    deletion, insertion = curve_panels(curves, flat, names, "m: faithfulness curves")
    fig = faithfulness_curves(curves, flat, names)
    for panel, axis in ((deletion, "x"), (insertion, "x2")):
        drawn = [(t.name, tuple(t.x), tuple(t.y), t.line.color, t.line.dash == "dash") for t in fig.data if t.xaxis == axis]
        assert [(line.name, line.x, line.y, line.color, line.dashed) for line in panel.lines] == drawn
    assert deletion.subtitle.startswith("deletion") and insertion.subtitle.startswith("insertion")


def test_shares_bar_stacks_each_tokens_source_and_prefix_share():
    from viz.figures.explanation_shares import shares_bar

    shares = np.array([[1.0, 0.0], [0.25, 0.75], [0.6, 0.4]])
    bar = shares_bar(shares, ["▁le", "▁<b>", "</s>"], "t")
    assert bar.labels == ("le", "<b>", "</s>")  # plain text: the page's script writes it as text
    assert bar.values == ((1.0, 0.25, 0.6), (0.0, 0.75, 0.4))  # (series, tokens)
    assert bar.names == ("source sentence", "words already written")


def test_faithfulness_curves_draw_each_method_and_the_random_order_on_both_panels():
    from model.explaining.faithfulness import Curves
    from viz.figures.faithfulness_curves import faithfulness_curves

    counts = np.array([0, 1, 2, 3, 5, 7])  # a 7-token source
    falling = Curves(counts, -np.arange(6.0), np.arange(6.0) - 5)
    flat = Curves(counts, np.full(6, -2.0), np.full(6, -2.0))
    fig = faithfulness_curves({"occlusion": falling, "attention": flat}, flat, {"occlusion": "occlusion (leave out)"})
    names = [(t.name, t.xaxis) for t in fig.data]
    assert names == [("occlusion (leave out)", "x"), ("occlusion (leave out)", "x2"), ("attention", "x"),
                     ("attention", "x2"), ("random order", "x"), ("random order", "x2")]  # deletion, then insertion
    assert list(fig.data[0].x) == pytest.approx([0, 1 / 7, 2 / 7, 3 / 7, 5 / 7, 1], abs=1e-4)  # shares removed
    assert list(fig.data[0].y) == [0, -1, -2, -3, -4, -5] and list(fig.data[1].y) == [-5, -4, -3, -2, -1, 0]
    assert [t.showlegend for t in fig.data] == [True, False] * 3  # one legend entry per line
    assert fig.data[-1].line.dash == "dash"
    again = faithfulness_curves({"attention": flat}, flat, {})
    assert again.data[0].line.color == fig.data[2].line.color  # a method keeps its colour in every figure
