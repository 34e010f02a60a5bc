"""The 2-D map of a sentence space: a sample of training sentences as grey dots, the user's
sentence and its nearest neighbours marked, each point's sentence on hover.

``sentence_map_layers`` says what the map holds (a ``SentenceMap``); the page draws it on a
canvas (``viz/pages/parts/canvas_charts.py``), the notebook as a plotly figure (``sentence_map``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

from viz.i18n import _

if TYPE_CHECKING:
    import plotly.graph_objects as go

SHOWN = 3_000  # sample points drawn (evenly spread over the sample): the browser draws them fast
DIGITS = 4  # decimals kept of each coordinate: a point moves by less than a pixel, the page's message shrinks


@dataclass(frozen=True)
class MapLayer:
    """One kind of point: ``x``, ``y`` and the sentence ``texts`` shown on hover, one each per point."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    texts: tuple[str, ...]
    size: int  # marker size in pixels
    color: str
    symbol: str = "circle"  # or "x"


@dataclass(frozen=True)
class SentenceMap:
    """What a map shows: its layers drawn in order (later ones on top)."""

    title: str
    x_title: str
    y_title: str
    layers: tuple[MapLayer, ...]
    height: int = 440


def shown_rows(n: int) -> np.ndarray:
    """The rows of an n-point sample that the map draws: at most ``SHOWN``, evenly spread."""
    return np.unique(np.linspace(0, n - 1, min(SHOWN, n)).astype(int)) if n else np.zeros(0, dtype=int)


def _layer(name: str, xy: np.ndarray, texts: Sequence[str], size: int, color: str, symbol: str = "circle") -> MapLayer:
    xy = np.round(np.asarray(xy, dtype=float).reshape(-1, 2), DIGITS)  # (points, 2)
    return MapLayer(name, tuple(xy[:, 0].tolist()), tuple(xy[:, 1].tolist()), tuple(texts), size, color, symbol)


def sentence_map_layers(points: np.ndarray, sentences: Sequence[str], mine: np.ndarray, text: str,
                        near: Sequence[int], title: str = "") -> SentenceMap:
    """points (n, 2) with their ``sentences``; ``mine`` (2,) the user's ``text``; ``near`` the rows
    of its nearest neighbours."""
    shown = shown_rows(len(points))
    near = [int(i) for i in near]
    return SentenceMap(title, _("first principal axis"), _("second principal axis"), (
        _layer(_("training sentences"), points[shown], [sentences[i] for i in shown], 4, "#b0b0b0"),
        _layer(_("nearest"), points[near] if near else np.zeros((0, 2)), [sentences[i] for i in near], 8, "#1f77b4"),
        _layer(_("yours"), mine, [text], 14, "#d62728", "x")))


def sentence_map(points: np.ndarray, sentences: Sequence[str], mine: np.ndarray, text: str,
                 near: Sequence[int], title: str = "") -> "go.Figure":
    """``sentence_map_layers`` as a plotly figure (the notebook's): ``plotly_map``."""
    return plotly_map(sentence_map_layers(points, sentences, mine, text, near, title))


def plotly_map(found: SentenceMap) -> "go.Figure":
    """``found`` drawn by plotly. Built from plain dicts (plotly's object updates are slow)."""
    import plotly.graph_objects as go

    traces = [{"type": "scattergl", "mode": "markers", "name": layer.name, "x": list(layer.x), "y": list(layer.y),
               "text": list(layer.texts), "hoverinfo": "text",
               "marker": {"size": layer.size, "color": layer.color, **({"symbol": "x"} if layer.symbol == "x" else {})}}
              for layer in found.layers]
    return go.Figure(data=traces, layout={
        "title": found.title, "height": found.height, "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"title": found.x_title, "zeroline": False}, "yaxis": {"title": found.y_title, "zeroline": False},
        "legend": {"orientation": "h", "y": -0.22}, "plot_bgcolor": "white"})  # below the axis title
