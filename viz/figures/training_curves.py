"""Training curves from a checkpoint card's log (one record per validation): two ``LinesFigure``
panels for the Models page's canvas (``training_panels``), one plotly figure with two y axes for
the card's picture (``training_curves``)."""
from __future__ import annotations

import html
from typing import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from model.cards.schema import ValidationRecord
from viz.figures.lines import Line, LinesFigure
from viz.i18n import _

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _line(name: str, colour: str, log: Sequence[ValidationRecord], value, dashed: bool = False) -> Line:
    """``value(record)`` against updates, leaving out the records that have none."""
    points = [(r.step, value(r)) for r in log if value(r) is not None]
    return Line(name, colour, tuple(float(x) for x, _y in points), tuple(round(float(y), 4) for _x, y in points), dashed)


def training_panels(log: Sequence[ValidationRecord], title: str = "") -> tuple[LinesFigure, LinesFigure]:
    """Train and validation loss, then validation BLEU (overall, and per corpus when several
    were mixed), against updates: what ``training_curves`` shows, as two panels."""
    corpora = list(dict.fromkeys(k for r in log for k in r.val_bleu_by_corpus))
    loss = LinesFigure(title, _("update"), _("cross-entropy"), (
        _line(_("train loss"), COLOURS[0], log, lambda r: r.train_loss),
        _line(_("val loss"), COLOURS[1], log, lambda r: r.val_loss)))
    bleu = LinesFigure("", _("update"), "BLEU", (
        _line(_("val BLEU (greedy)"), COLOURS[2], log, lambda r: r.val_bleu, dashed=True),
        *(_line(_("val BLEU, {corpus}").format(corpus=corpus), COLOURS[3 + k % 4], log,
                lambda r, c=corpus: r.val_bleu_by_corpus.get(c), dashed=True) for k, corpus in enumerate(corpora))),
        from_zero=True)
    return loss, bleu


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
