"""How faithful each explanation of one translation is, drawn: its deletion and insertion curves
beside a random order's (model/explaining/faithfulness.py · ``Curves``), deletion above insertion.
The x axis is the share of source tokens removed (deletion) or kept (insertion), most important
first; the y axis the output's mean log-probability per token, re-scored with the same output.

Two ``LinesFigure`` panels describe them (``curve_panels``): the page draws them on a canvas
(viz/pages/parts/canvas_charts.py), the notebook as one plotly figure (``faithfulness_curves``)."""
from __future__ import annotations

from typing import Mapping

import plotly.graph_objects as go

from model.explaining.faithfulness import Curves
from viz.figures.lines import Line, LinesFigure, plotly_panels
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
    """``curves`` (method -> Curves) and the random order's, one panel above the other: deletion
    (falling fast is faithful) and insertion (rising fast is faithful); ``names``: each method's
    label. The pages' two panels (``curve_panels``) drawn by plotly."""
    return plotly_panels(curve_panels(curves, random_curves, names), title)
