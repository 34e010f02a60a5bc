"""How faithful each explanation of one translation is, drawn: its deletion and insertion curves
beside a random order's (model/explaining/faithfulness.py · ``Curves``). The x axis is the share of
source tokens removed (deletion) or kept (insertion), most important first; the y axis the
output's mean log-probability per token, re-scored with the same output."""
from __future__ import annotations

from typing import Mapping

from plotly.subplots import make_subplots
import plotly.graph_objects as go

from model.explaining.faithfulness import Curves
from viz.i18n import _

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd")


def faithfulness_curves(curves: Mapping[str, Curves], random_curves: Curves, names: Mapping[str, str],
                        title: str = "") -> go.Figure:
    """``curves`` (method -> Curves) and the random order's, side by side: deletion (falling fast
    is faithful) and insertion (rising fast is faithful); ``names``: each method's label."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(_("deletion: most important removed first (lower is better)"),
                                                        _("insertion: most important added first (higher is better)")))
    lines = [(names.get(m, m), c, {"color": COLOURS[i % len(COLOURS)]}) for i, (m, c) in enumerate(curves.items())]
    lines.append((_("random order"), random_curves, {"color": "#7f7f7f", "dash": "dash"}))
    for name, curve, line in lines:
        share = (curve.counts / max(int(curve.counts[-1]), 1)).round(4).tolist()
        for col, values in ((1, curve.deletion), (2, curve.insertion)):
            fig.add_trace(go.Scatter(x=share, y=[round(float(v), 4) for v in values], mode="lines+markers", name=name,
                                     line=line, legendgroup=name, showlegend=col == 1,
                                     hovertemplate=f"{name}<br>%{{x:.0%}}: %{{y:.3f}}<extra></extra>"), row=1, col=col)
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title_text=_("share of source tokens"))
    fig.update_yaxes(title_text=_("mean log-probability per token"), col=1)
    fig.update_layout(title=title, height=320, margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      legend={"orientation": "h", "y": -0.3})
    return fig
