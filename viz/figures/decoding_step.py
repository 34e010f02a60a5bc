"""Figures for one decoding step: attention over the source, raw energies, top-k candidates."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from model.decoding.trace import Candidate
from viz.figures.heatmap import display_token
from viz.i18n import _


def source_strip(weights: np.ndarray, src_tokens: Sequence[str], title: str = "",
                 value_name: Optional[str] = None) -> go.Figure:
    """The source sentence as one row of cells shaded by ``weights`` (e.g. alpha_i); hover names
    the value ``value_name`` (default "attention")."""
    value_name = _("attention") if value_name is None else value_name
    labels = [display_token(t) for t in src_tokens]
    fig = go.Figure(go.Heatmap(
        z=[list(weights)], x=list(range(len(labels))), y=[0], text=[labels], texttemplate="%{text}",
        colorscale="Blues", zmin=0, zmax=max(1e-9, float(np.max(weights))) if len(weights) else 1,
        customdata=[labels], hovertemplate=f"%{{customdata}}<br>{value_name}: %{{z:.3f}}<extra></extra>",
        showscale=False))
    fig.update_layout(title=title, height=140, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      xaxis={"visible": False}, yaxis={"visible": False})
    return fig


def energies_bar(energies: np.ndarray, src_tokens: Sequence[str], title: Optional[str] = None) -> go.Figure:
    """Bar per source position with the pre-softmax alignment energy (title: "energies e_ij")."""
    title = _("energies e_ij") if title is None else title
    labels = [display_token(t) for t in src_tokens]
    fig = go.Figure(go.Bar(x=list(range(len(labels))), y=list(energies), customdata=labels,
                           hovertemplate="%{customdata}: %{y:.3f}<extra></extra>", marker_color="#6baed6"))
    fig.update_layout(title=title, height=260, margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      xaxis={"tickmode": "array", "tickvals": list(range(len(labels))), "ticktext": labels,
                             "tickangle": -60})
    return fig


def topk_bar(candidates: Sequence[Candidate], chosen: Optional[int] = None,
             title: Optional[str] = None) -> go.Figure:
    """Horizontal bars of the top-k candidate probabilities; the chosen token in red (title:
    "next-token candidates")."""
    title = _("next-token candidates") if title is None else title
    labels = [display_token(c.token) for c in candidates]
    colours = ["#d62728" if c.id == chosen else "#9ecae1" for c in candidates]
    fig = go.Figure(go.Bar(x=[c.prob for c in candidates], y=list(range(len(labels))), orientation="h",
                           marker_color=colours, customdata=labels,
                           hovertemplate="%{customdata}: p=%{x:.3f}<extra></extra>"))
    fig.update_layout(title=title, height=60 + 28 * max(len(labels), 1), margin={"l": 10, "r": 10, "t": 40, "b": 10},
                      xaxis={"range": [0, 1], "title": _("probability")},
                      yaxis={"tickmode": "array", "tickvals": list(range(len(labels))), "ticktext": labels,
                             "autorange": "reversed"})
    return fig


def norms_bar(norms: Sequence[float], src_tokens: Sequence[str], title: str) -> go.Figure:
    """Bar per source position with a vector's length there (e.g. ||h_j||)."""
    fig = energies_bar(np.asarray(norms), src_tokens, title)
    fig.update_traces(marker_color="#74c476")
    return fig
