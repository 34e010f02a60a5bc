"""A line chart's one description (``LinesFigure``), as the pages draw it on a canvas
(viz/pages/parts/canvas_charts.py) and plotly draws it for the notebook (``plotly_panels``):
faithfulness curves (viz/figures/faithfulness_curves.py), BLEU by sentence length and length
stress tests (viz/figures/length_chart.py). Labels are plain text: the page's script writes them
as text."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Line:
    """One line through its points, with a dot at each; ``band`` (lower, upper), one pair per
    point, is shaded around it; ``hovers`` (one per point) is what hovering shows, by default the
    line's name and the point."""

    name: str
    color: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    dashed: bool = False
    band: tuple[tuple[float, ...], ...] = ()  # () or (lower, upper)
    hovers: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinesFigure:
    """Lines on one pair of axes, one legend entry each. The x axis is a share written in per
    cent (``share``: 0 to 1), or numbers with ``x_ticks`` ((value, label) pairs; a label may hold
    a second line after a newline) or ticks of its own; ``from_zero`` starts the y axis at 0."""

    title: str
    x_title: str
    y_title: str
    lines: tuple[Line, ...]
    subtitle: str = ""
    share: bool = False
    x_ticks: tuple[tuple[float, str], ...] = ()
    from_zero: bool = False


def plotly_panels(panels: Sequence[LinesFigure], title: str = "", height: int = 520):
    """``panels`` (the same lines in each, as ``faithfulness_curves.curve_panels`` makes them)
    drawn by plotly one above the other, each panel's subtitle over it: a trace per line and panel,
    line by line (a line's band, when it has one, as two traces before it), one legend entry a
    line. A share axis runs 0 to 100%."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=len(panels), cols=1, vertical_spacing=0.16,  # one above the other: a page column is narrow
                        subplot_titles=[panel.subtitle for panel in panels])
    for k in range(len(panels[0].lines)):
        for row, panel in enumerate(panels, 1):
            line = panel.lines[k]
            where = "%{x:.0%}" if panel.share else "%{x}"
            if line.band:  # the shaded band: its upper edge, then the lower filled up to it
                lower, upper = line.band
                for edge, fill in ((upper, None), (lower, "tonexty")):
                    fig.add_trace(go.Scatter(x=list(line.x), y=list(edge), mode="lines", line={"width": 0},
                                             fill=fill, fillcolor=line.color, opacity=0.15, hoverinfo="skip",
                                             legendgroup=line.name, showlegend=False), row=row, col=1)
            fig.add_trace(go.Scatter(x=list(line.x), y=list(line.y), mode="lines+markers", name=line.name,
                                     line={"color": line.color, **({"dash": "dash"} if line.dashed else {})},
                                     legendgroup=line.name, showlegend=row == 1,
                                     hovertemplate=f"{line.name}<br>{where}: %{{y:.3f}}<extra></extra>"), row=row, col=1)
    for row, panel in enumerate(panels, 1):
        if panel.share:
            fig.update_xaxes(range=[0, 1], tickformat=".0%", row=row, col=1)
    fig.update_xaxes(title_text=panels[-1].x_title, row=len(panels), col=1)
    fig.update_yaxes(title_text=panels[0].y_title)
    fig.update_layout(title=title, height=height, margin={"l": 10, "r": 10, "t": 70, "b": 10},
                      legend={"orientation": "h", "y": -0.18})
    return fig
