"""Training curves from a checkpoint's JSON-lines log (one record per epoch)."""
from __future__ import annotations

from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots


def training_curves(log: Sequence[dict], title: str = "") -> go.Figure:
    """Train / validation loss (left axis) and validation BLEU (right axis) per epoch."""
    epochs = [r["epoch"] for r in log]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=epochs, y=[r["train_loss"] for r in log], name="train loss", mode="lines+markers"))
    fig.add_trace(go.Scatter(x=epochs, y=[r["val_loss"] for r in log], name="val loss", mode="lines+markers"))
    fig.add_trace(go.Scatter(x=epochs, y=[r["val_bleu"] for r in log], name="val BLEU (greedy)",
                             mode="lines+markers", line={"dash": "dot"}), secondary_y=True)
    fig.update_layout(title=title, height=340, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.2}, xaxis={"title": "epoch", "dtick": 1})
    fig.update_yaxes(title_text="cross-entropy", secondary_y=False)
    fig.update_yaxes(title_text="BLEU", secondary_y=True)
    return fig
