"""The 2-D map of a sentence space: a sample of training sentences as grey dots, the user's
sentence and its nearest neighbours marked, each point's sentence on hover."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from viz.i18n import _

SHOWN = 3_000  # sample points drawn (evenly spread over the sample): the browser draws them fast


def sentence_map(points: np.ndarray, sentences: Sequence[str], mine: np.ndarray, text: str,
                 near: Sequence[int], title: str = "") -> go.Figure:
    """points (n, 2) with their ``sentences``; ``mine`` (2,) the user's ``text``; ``near`` the rows
    of its nearest neighbours. Built from plain dicts (plotly's object updates are slow)."""
    shown = np.unique(np.linspace(0, len(points) - 1, min(SHOWN, len(points))).astype(int)) if len(points) else []
    near = [int(i) for i in near]
    traces = [
        {"type": "scattergl", "mode": "markers", "name": _("training sentences"), "x": points[shown, 0].tolist(),
         "y": points[shown, 1].tolist(), "text": [sentences[i] for i in shown], "hoverinfo": "text",
         "marker": {"size": 4, "color": "#b0b0b0"}},
        {"type": "scattergl", "mode": "markers", "name": _("nearest"), "x": points[near, 0].tolist() if near else [],
         "y": points[near, 1].tolist() if near else [], "text": [sentences[i] for i in near], "hoverinfo": "text",
         "marker": {"size": 8, "color": "#1f77b4"}},
        {"type": "scattergl", "mode": "markers", "name": _("yours"), "x": [float(mine[0])], "y": [float(mine[1])],
         "text": [text], "hoverinfo": "text", "marker": {"size": 14, "color": "#d62728", "symbol": "x"}},
    ]
    return go.Figure(data=traces, layout={
        "title": title, "height": 440, "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"title": _("first principal axis"), "zeroline": False},
        "yaxis": {"title": _("second principal axis"), "zeroline": False},
        "legend": {"orientation": "h", "y": -0.22}, "plot_bgcolor": "white"})  # below the axis title
