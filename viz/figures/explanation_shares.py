"""For each output token, the share of an explanation on the source sentence and on the words
already written: one stacked bar per output token (model/explaining/explanation.py · ``shares``)."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from viz.figures.heatmap import display_token
from viz.i18n import _


def shares_bar(shares: np.ndarray, output_tokens: Sequence[str], title: str = "") -> go.Figure:
    """``shares`` (T, 2): source and prefix share per output token (rows summing to 1)."""
    labels = [display_token(t) for t in output_tokens]
    x = list(range(len(labels)))
    source, prefix = _("source sentence"), _("words already written")
    return go.Figure(data=[
        dict(type="bar", x=x, y=np.asarray(shares)[:, 0].round(4).tolist(), name=source, marker={"color": "#1f77b4"},
             customdata=labels, hovertemplate=f"%{{customdata}}<br>{source}: %{{y:.2f}}<extra></extra>"),
        dict(type="bar", x=x, y=np.asarray(shares)[:, 1].round(4).tolist(), name=prefix, marker={"color": "#ff7f0e"},
             customdata=labels, hovertemplate=f"%{{customdata}}<br>{prefix}: %{{y:.2f}}<extra></extra>")],
        layout={"barmode": "stack", "title": title, "height": 260, "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
                "xaxis": {"tickmode": "array", "tickvals": x, "ticktext": labels, "tickangle": -60},
                "yaxis": {"range": [0, 1], "title": _("share")}, "legend": {"orientation": "h", "y": -0.35}})
