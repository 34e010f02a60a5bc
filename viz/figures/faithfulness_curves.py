"""How faithful each explanation of one translation is, drawn: its deletion and insertion curves
beside a random order's (model/explaining/faithfulness.py · ``Curves``), deletion above insertion.
The x axis is the share of source tokens removed (deletion) or kept (insertion), most important
first; the y axis the output's mean log-probability per token, re-scored with the same output.

The page draws them as two ``LinesFigure`` panels on a canvas (viz/pages/parts/canvas_charts.py ·
``curve_panels``); the notebook as one plotly figure (``faithfulness_curves``)."""
from __future__ import annotations

from typing import Mapping

from plotly.subplots import make_subplots
import plotly.graph_objects as go

from model.explaining.faithfulness import Curves
from viz.figures.lines import Line, LinesFigure
from viz.figures.method_labels import method_colour
from viz.i18n import _

def _lines(curves: Mapping[str, Curves], random_curves: Curves, names: Mapping[str, str]):
    """(name, curve, colour, dashed) for each method's curves, then the random order's."""
    found = [(names.get(m, m), c, method_colour(m, i), False)
             for i, (m, c) in enumerate(curves.items())]
    return found + [(_("random order"), random_curves, "#7f7f7f", True)]


def curve_panels(curves: Mapping[str, Curves], random_curves: Curves, names: Mapping[str, str],
                 title: str = "") -> tuple[LinesFigure, LinesFigure]:
    """What ``faithfulness_curves`` shows, as two ``LinesFigure`` panels for the page's canvas:
    deletion, then insertion."""
    subtitles = (_("deletion: most important removed first (lower is better)"),
                 _("insertion: most important added first (higher is better)"))
    lines = _lines(curves, random_curves, names)
    return tuple(LinesFigure(title, _("share of source tokens"), _("log p per token"), tuple(
        Line(name, colour, tuple((curve.counts / max(int(curve.counts[-1]), 1)).round(4).tolist()),
             tuple(round(float(v), 4) for v in getattr(curve, panel)), dashed)
        for name, curve, colour, dashed in lines), subtitle, share=True)
        for subtitle, panel in zip(subtitles, ("deletion", "insertion")))


def faithfulness_curves(curves: Mapping[str, Curves], random_curves: Curves, names: Mapping[str, str],
                        title: str = "") -> go.Figure:
    """``curves`` (method -> Curves) and the random order's, side by side: deletion (falling fast
    is faithful) and insertion (rising fast is faithful); ``names``: each method's label."""
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.16,  # one above the other: a page column is narrow
                        subplot_titles=(_("deletion: most important removed first (lower is better)"),
                                        _("insertion: most important added first (higher is better)")))
    lines = [(name, curve, {"color": colour, **({"dash": "dash"} if dashed else {})})
             for name, curve, colour, dashed in _lines(curves, random_curves, names)]
    for name, curve, line in lines:
        share = (curve.counts / max(int(curve.counts[-1]), 1)).round(4).tolist()
        for row, values in ((1, curve.deletion), (2, curve.insertion)):
            fig.add_trace(go.Scatter(x=share, y=[round(float(v), 4) for v in values], mode="lines+markers", name=name,
                                     line=line, legendgroup=name, showlegend=row == 1,
                                     hovertemplate=f"{name}<br>%{{x:.0%}}: %{{y:.3f}}<extra></extra>"), row=row, col=1)
    fig.update_xaxes(range=[0, 1], tickformat=".0%")
    fig.update_xaxes(title_text=_("share of source tokens"), row=2, col=1)
    fig.update_yaxes(title_text=_("log p per token"))
    fig.update_layout(title=title, height=520, margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      legend={"orientation": "h", "y": -0.18})
    return fig
