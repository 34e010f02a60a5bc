"""The whole beam search as a left-to-right tree (one scatter marker per hypothesis)."""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go

from viz.figures.heatmap import display_token
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
