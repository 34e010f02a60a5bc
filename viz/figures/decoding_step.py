"""Figures for one decoding step: attention over the source, raw energies, top-k candidates.

They are drawn on a canvas by the page's own script (``viz/pages/parts/canvas_charts.py``), so the
step view and the Paper page's equations load no plotly: the strip is a one-row ``MatrixFigure``,
the bars a ``BarsFigure``. Tokens are plain text (the script writes them as text).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from model.decoding.trace import Candidate
from viz.figures.heatmap import DIGITS, MatrixFigure, token_text
from viz.i18n import _


@dataclass(frozen=True)
class BarsFigure:
    """One bar per label: upright along the source (energies, norms), or lying down a list
    (``horizontal``: the top-k candidates). ``value_range`` None spans the values and 0."""

    title: str
    labels: tuple[str, ...]
    values: tuple[float, ...]
    colors: tuple[str, ...]
    horizontal: bool = False
    value_name: str = ""  # what the hover calls a value ("p" shows "le: p=0.600")
    value_title: str = ""  # the value axis's title
    value_range: Optional[tuple[float, float]] = None


def _values(values) -> tuple[float, ...]:
    return tuple(np.round(np.asarray(values, dtype=float), DIGITS).tolist())


def source_strip(weights: np.ndarray, src_tokens: Sequence[str], title: str = "",
                 value_name: Optional[str] = None) -> MatrixFigure:
    """The source sentence as one row of cells shaded by ``weights`` (e.g. alpha_i), darkest at
    their largest; hover names the value ``value_name`` (default "attention")."""
    weights = np.asarray(weights, dtype=float)
    return MatrixFigure(title, tuple(token_text(t) for t in src_tokens), ("",), (_values(weights),), "", "",
                        _("attention") if value_name is None else value_name, "blues",
                        max(1e-9, float(weights.max())) if len(weights) else 1.0)


def energies_bar(energies: np.ndarray, src_tokens: Sequence[str], title: Optional[str] = None,
                 color: str = "#6baed6") -> BarsFigure:
    """Bar per source position with the pre-softmax alignment energy (title: "energies e_ij")."""
    return BarsFigure(_("energies e_ij") if title is None else title, tuple(token_text(t) for t in src_tokens),
                      _values(energies), (color,) * len(src_tokens))


def topk_bar(candidates: Sequence[Candidate], chosen: Optional[int] = None,
             title: Optional[str] = None) -> BarsFigure:
    """Horizontal bars of the top-k candidate probabilities; the chosen token in red (title:
    "next-token candidates")."""
    return BarsFigure(_("next-token candidates") if title is None else title,
                      tuple(token_text(c.token) for c in candidates), _values([c.prob for c in candidates]),
                      tuple("#d62728" if c.id == chosen else "#9ecae1" for c in candidates), horizontal=True,
                      value_name="p", value_title=_("probability"), value_range=(0.0, 1.0))


def norms_bar(norms: Sequence[float], src_tokens: Sequence[str], title: str) -> BarsFigure:
    """Bar per source position with a vector's length there (e.g. ||h_j||)."""
    return energies_bar(np.asarray(norms), src_tokens, title, color="#74c476")
