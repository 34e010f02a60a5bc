"""For each output token, the share of an explanation on the source sentence and on the words
already written: one stacked bar per output token (model/explaining/explanation.py · ``shares``),
a ``StackFigure`` the page draws on a canvas (viz/pages/parts/canvas_charts.py)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from viz.figures.heatmap import DIGITS, token_text
from viz.i18n import _


@dataclass(frozen=True)
class StackFigure:
    """One bar per label, made of one segment per series stacked from 0 (``values``: (series,
    labels); ``names`` and ``colors``: one per series). Labels are plain text."""

    title: str
    labels: tuple[str, ...]
    names: tuple[str, ...]
    colors: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    value_title: str


def shares_bar(shares: np.ndarray, output_tokens: Sequence[str], title: str = "") -> StackFigure:
    """``shares`` (T, 2): source and prefix share per output token (rows summing to 1)."""
    shares = np.round(np.asarray(shares, dtype=float).reshape(-1, 2), DIGITS)  # (T, 2)
    return StackFigure(title, tuple(token_text(t) for t in output_tokens),
                       (_("source sentence"), _("words already written")), ("#1f77b4", "#ff7f0e"),
                       tuple(tuple(column) for column in shares.T.tolist()), _("share"))
