"""A Transformer's layer × head AER grid as the Alignment and Paper pages show it: the heatmap
and the words for one of its cells (model/scoring/attention_alignment.py · ``head_grid``)."""
from __future__ import annotations

import numpy as np

from viz.figures.heatmap import MatrixFigure, alignment_matrix
from viz.i18n import _


def grid_figure(grid: np.ndarray, title: str) -> MatrixFigure:
    """``grid`` (layers, heads + 1): AER of each decoder layer's heads, the last column the mean
    of its heads; a cell not measured (NaN) is drawn as AER 1. Rows the layers, columns the heads."""
    heads = [_("head {head}").format(head=h + 1) for h in range(grid.shape[1] - 1)] + [_("mean")]
    layers = [_("layer {layer}").format(layer=k + 1) for k in range(grid.shape[0])]
    return alignment_matrix(np.nan_to_num(grid, nan=1.0), heads, layers, title=title, zmax=1.0, value_name="AER",
                            row_name=_("decoder layer"), column_name=_("head"))


def reading_text(row) -> str:
    """Which cell a "heads" row (``layer``, ``head`` 1-based or None for the mean, ``shifted``) is, in words."""
    which = (_("layer {layer}, head {head}").format(layer=row.layer, head=row.head) if row.head else
             _("layer {layer}, mean of its heads").format(layer=row.layer))
    return which + (_(", shifted") if row.shifted else "")
