"""The whole beam search as a left-to-right tree, one marker per hypothesis: a ``TreeFigure``
the Translate page draws on a canvas (viz/pages/parts/canvas_charts.py, where a click on a node
picks it), and a plotly figure for the notebook and the HTML report."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import plotly.graph_objects as go

from viz.figures.heatmap import display_token, token_text
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
    """Nodes are dicts with id, parent, step, token, score, norm_score, status (trace JSON).

    Traces: edges first (grey, the best path red), then one scatter per status whose
    ``customdata[0]`` is the node id, so a click tells the page which hypothesis it was.
    """
    index = {n["id"]: k for k, n in enumerate(nodes)}  # ids need not be positions (filtered trees)
    y = tree_layout([index.get(n["parent"]) for n in nodes])
    y = {n["id"]: y[k] for k, n in enumerate(nodes)}
    token, step, normalised = _("token"), _("step"), _("normalised")
    hover = (f"{token}: %{{customdata[1]}}<br>{step}: %{{x}}<br>log p: %{{customdata[2]}}"
             f"<br>{normalised}: %{{customdata[3]}}<extra></extra>")
    fig = go.Figure()
    for best in (False, True):
        xs, ys = [], []
        for n in nodes:
            if n["parent"] in index and (n["status"] == "best") == best:
                xs += [nodes[index[n["parent"]]]["step"], n["step"], None]
                ys += [y[n["parent"]], y[n["id"]], None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": "#d62728" if best else "#dddddd", "width": 3 if best else 1}))
    for status, (colour, size, label) in STATUS_STYLE.items():
        group = [n for n in nodes if n["status"] == status]
        fig.add_trace(go.Scatter(
            x=[n["step"] for n in group], y=[y[n["id"]] for n in group], mode="markers+text", name=_(label),
            text=[display_token(n["token"]) for n in group], textposition="middle right",
            textfont={"size": 10, "color": "#444" if status != "best" else colour},
            marker={"color": colour, "size": size, "line": {"width": 1, "color": "white"}},
            customdata=[[n["id"], display_token(n["token"]), _fmt(n["score"]), _fmt(n["norm_score"])]
                        for n in group],
            hovertemplate=hover))
    steps = max((n["step"] for n in nodes), default=0)
    fig.update_layout(title=title, height=max(350, 14 * (max(y.values(), default=0) + 1) + 120),
                      xaxis={"title": step, "dtick": 1, "range": [-0.5, steps + 1.2]},
                      yaxis={"visible": False}, plot_bgcolor="white", clickmode="event+select",
                      legend={"orientation": "h", "y": 1.08}, margin={"l": 10, "r": 10, "t": 70, "b": 40})
    return fig


def _fmt(x) -> str:
    return "-inf" if x is None else f"{x:.3f}"
