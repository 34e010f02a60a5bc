"""The whole beam search as a left-to-right tree, one marker per hypothesis: a ``TreeFigure``, the
one description, which the Translate page draws on a canvas (viz/pages/parts/canvas_charts.py,
where a click on a node picks it) and plotly draws for the notebook and the HTML report
(``plotly_tree``)."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

import plotly.graph_objects as go

from viz.figures.heatmap import token_text
from viz.i18n import N_, _

STATUS_STYLE = {  # status -> (colour, marker size, legend label, shown through _)
    "pruned": ("#c7c7c7", 7, N_("pruned")),
    "kept": ("#1f77b4", 9, N_("kept in beam")),
    "finished": ("#ff7f0e", 10, N_("finished (other)")),
    "best": ("#d62728", 13, N_("best path")),
}


def tree_layout(parents: Sequence) -> list[float]:
    """y position per node: leaves get consecutive rows in depth-first order, each inner
    node sits at the mean of its children, so no edges cross."""
    children: dict[int, list[int]] = {i: [] for i in range(len(parents))}
    roots = []
    for node, parent in enumerate(parents):
        (roots if parent is None else children[parent]).append(node)
    y = [0.0] * len(parents)
    next_leaf = 0
    stack = [(root, False) for root in reversed(roots)]
    while stack:  # iterative post-order: deep trees must not hit the recursion limit
        node, visited = stack.pop()
        if visited:
            y[node] = sum(y[c] for c in children[node]) / len(children[node])
        elif not children[node]:
            y[node], next_leaf = float(next_leaf), next_leaf + 1
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(children[node]))
    return y


@dataclass(frozen=True)
class TreeFigure:
    """Node k sits at step ``steps[k]`` and row ``rows[k]`` (``tree_layout``), joined to node
    ``parents[k]`` (an index; -1 for a root) and drawn in the style of ``statuses[k]`` (the
    ``styles`` rows: status, colour, marker size, legend name). Tokens are plain text; a click on
    node k sends ``ids[k]``, its id in the trace."""

    title: str
    x_title: str
    ids: tuple[int, ...]
    steps: tuple[int, ...]
    rows: tuple[float, ...]
    parents: tuple[int, ...]
    statuses: tuple[str, ...]
    labels: tuple[str, ...]
    hovers: tuple[str, ...]  # what hovering over the node shows (lines joined by newlines)
    styles: tuple[tuple[str, str, int, str], ...]


def beam_tree(nodes: Sequence[dict], title: str = "") -> TreeFigure:
    """What ``beam_tree_figure`` shows, as a ``TreeFigure`` for the page's canvas."""
    index = {n["id"]: k for k, n in enumerate(nodes)}
    parents = [index.get(n["parent"], -1) for n in nodes]
    token, step, normalised = _("token"), _("step"), _("normalised")
    return TreeFigure(
        title, step, tuple(int(n["id"]) for n in nodes), tuple(int(n["step"]) for n in nodes),
        tuple(tree_layout([None if p < 0 else p for p in parents])), tuple(parents),
        tuple(n["status"] for n in nodes), tuple(token_text(n["token"]) for n in nodes),
        tuple(f"{token}: {token_text(n['token'])}\n{step}: {n['step']}\nlog p: {_fmt(n['score'])}\n"
              f"{normalised}: {_fmt(n['norm_score'])}" for n in nodes),
        tuple((status, colour, size, _(label)) for status, (colour, size, label) in STATUS_STYLE.items()))


def beam_tree_figure(nodes: Sequence[dict], title: str = "") -> go.Figure:
    """Nodes are dicts with id, parent, step, token, score, norm_score, status (trace JSON): the
    tree ``beam_tree`` describes, drawn by plotly (``plotly_tree``)."""
    return plotly_tree(beam_tree(nodes, title))


def plotly_tree(figure: TreeFigure) -> go.Figure:
    """``figure`` drawn by plotly. Traces: edges first (grey, the best path red), then one
    scatter per status whose ``customdata[0]`` is the node id, so a click tells the page which
    hypothesis it was. Tokens and hover text are HTML-escaped."""
    fig = go.Figure()
    for best in (False, True):
        xs, ys = [], []
        for k, parent in enumerate(figure.parents):
            if parent >= 0 and (figure.statuses[k] == "best") == best:
                xs += [figure.steps[parent], figure.steps[k], None]
                ys += [figure.rows[parent], figure.rows[k], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": "#d62728" if best else "#dddddd", "width": 3 if best else 1}))
    for status, colour, size, label in figure.styles:
        group = [k for k, s in enumerate(figure.statuses) if s == status]
        fig.add_trace(go.Scatter(
            x=[figure.steps[k] for k in group], y=[figure.rows[k] for k in group], mode="markers+text", name=label,
            text=[html.escape(figure.labels[k], quote=False) for k in group], textposition="middle right",
            textfont={"size": 10, "color": "#444" if status != "best" else colour},
            marker={"color": colour, "size": size, "line": {"width": 1, "color": "white"}},
            customdata=[[figure.ids[k], html.escape(figure.labels[k], quote=False),
                         html.escape(figure.hovers[k], quote=False).replace("\n", "<br>")] for k in group],
            hovertemplate="%{customdata[2]}<extra></extra>"))
    steps = max(figure.steps, default=0)
    fig.update_layout(title=figure.title, height=max(350, 14 * (max(figure.rows, default=0) + 1) + 120),
                      xaxis={"title": figure.x_title, "dtick": 1, "range": [-0.5, steps + 1.2]},
                      yaxis={"visible": False}, plot_bgcolor="white", clickmode="event+select",
                      legend={"orientation": "h", "y": 1.08}, margin={"l": 10, "r": 10, "t": 70, "b": 40})
    return fig


def _fmt(x) -> str:
    return "-inf" if x is None else f"{x:.3f}"
