"""A line chart as the pages draw it on a canvas (viz/pages/parts/canvas_charts.py): faithfulness
curves (viz/figures/faithfulness_curves.py), BLEU by sentence length and length stress tests
(viz/figures/length_chart.py). Labels are plain text: the page's script writes them as text."""
from __future__ import annotations

from dataclasses import dataclass


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
