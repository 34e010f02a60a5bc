"""Training curves from a checkpoint card's log (one record per validation)."""
from __future__ import annotations

import html
from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.cards.schema import ValidationRecord
from viz.i18n import _


def training_curves(log: Sequence[ValidationRecord], title: str = "") -> go.Figure:
    """Train / validation loss (left axis) and validation BLEU (right axis, overall and per
    corpus when several were mixed) against updates."""
    x = [r.step for r in log]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=x, y=[r.train_loss for r in log], name=_("train loss"), mode="lines+markers"))
    fig.add_trace(go.Scatter(x=x, y=[r.val_loss for r in log], name=_("val loss"), mode="lines+markers"))
    fig.add_trace(go.Scatter(x=x, y=[r.val_bleu for r in log], name=_("val BLEU (greedy)"),
                             mode="lines+markers", line={"dash": "dot"}), secondary_y=True)
    for corpus in dict.fromkeys(k for r in log for k in r.val_bleu_by_corpus):
        fig.add_trace(go.Scatter(x=x, y=[r.val_bleu_by_corpus.get(corpus) for r in log],
                                 name=_("val BLEU, {corpus}").format(corpus=html.escape(corpus)), mode="lines",
                                 line={"dash": "dot", "width": 1}),
                      secondary_y=True)
    fig.update_layout(title=title, height=340, margin={"l": 10, "r": 10, "t": 50, "b": 10},
                      legend={"orientation": "h", "y": -0.2}, xaxis={"title": _("update")})
    fig.update_yaxes(title_text=_("cross-entropy"), secondary_y=False)
    fig.update_yaxes(title_text="BLEU", secondary_y=True)
    return fig
