"""Which heads matter, as the Alignment and Paper pages draw it from a Transformer's card
(model/cards/schema.py · ``HeadImportanceRecord``, written by ``python -m model.heads --card``):
one attention's layer × head grid of the log-probability lost when the head is switched off, the
pruning curve, and the rank correlation of the cross-attention's importance with its AER."""
from __future__ import annotations

from typing import Optional

import numpy as np

from model.cards.schema import HeadImportanceRecord
from model.explaining.head_importance import HeadImportance, HeadScore, correlation
from viz.figures.heatmap import MatrixFigure, alignment_matrix
from viz.figures.lines import Line, LinesFigure
from viz.i18n import N_, _

KIND_LABELS = {"encoder": N_("encoder self-attention"), "decoder_self": N_("decoder self-attention"),
               "cross": N_("cross-attention")}


def as_importance(record: HeadImportanceRecord) -> HeadImportance:
    """The card's record as the measurement's own type (its grids and order)."""
    shape: dict = {}
    for h in record.heads:
        layers, heads = shape.get(h.kind, (0, 0))
        shape[h.kind] = (max(layers, h.layer), max(heads, h.head))
    scores = tuple(HeadScore(h.kind, h.layer, h.head, h.logprob_change, h.reference_change, h.bleu) for h in record.heads)
    return HeadImportance(shape, record.sentences, record.bleu_against, record.base_logprob, record.base_bleu, scores,
                          tuple((p.heads_off, p.bleu) for p in record.pruning))


def lost_grid(record: HeadImportanceRecord, kind: str) -> np.ndarray:
    """(layers, heads): log p per token lost with each head off (0 where switching it off helped)."""
    return np.clip(-as_importance(record).grid(kind), 0.0, None)


def importance_figure(record: HeadImportanceRecord, kind: str, title: str = "") -> MatrixFigure:
    grid = lost_grid(record, kind)
    heads = [_("head {head}").format(head=h + 1) for h in range(grid.shape[1])]
    layers = [_("layer {layer}").format(layer=k + 1) for k in range(grid.shape[0])]
    return alignment_matrix(grid, heads, layers, title=title or _(KIND_LABELS[kind]),
                            zmax=max(float(grid.max()), 1e-6), value_name=_("log p lost"),
                            row_name=_("layer"), column_name=_("head"), digits=4)


def pruning_figure(record: HeadImportanceRecord, name: str) -> LinesFigure:
    """BLEU as the heads are switched off together, least important first (Michel et al. 2019)."""
    xs = tuple(float(p.heads_off) for p in record.pruning)
    ys = tuple(float(p.bleu) for p in record.pruning)
    return LinesFigure(_("Switching heads off, least important first"), _("heads switched off"), "BLEU",
                       (Line(name, "#1f77b4", xs, ys),), from_zero=True)


def aer_correlation(record: HeadImportanceRecord, shifted: bool = False) -> Optional[float]:
    """Spearman's correlation of the cross-attention's importance with its recorded AER grid."""
    grid = record.cross_aer_shifted if shifted else record.cross_aer_output
    if not grid:
        return None
    value = correlation(as_importance(record), np.array(grid, dtype=float))
    return None if np.isnan(value) else value


def summary_text(record: HeadImportanceRecord) -> str:
    """Two sentences: how much the model loses without its least important heads, and whether the
    heads that align are the heads that matter."""
    total = len(record.heads)
    half = next((p for p in record.pruning if p.heads_off >= total // 2), None)
    text = _("With every head on, BLEU is {bleu:.1f} on {n} sentences (against {against}).").format(
        bleu=record.base_bleu, n=record.sentences,
        against=_("the references") if record.bleu_against == "references" else _("its own output"))
    if half is not None:
        text += " " + _("With the {k} least important of its {total} heads off it is {after:.1f}.").format(
            k=half.heads_off, total=total, after=half.bleu)
    found = {shifted: aer_correlation(record, shifted) for shifted in (False, True)}
    found = {k: v for k, v in found.items() if v is not None}
    if found:
        shifted, value = max(found.items(), key=lambda kv: abs(kv[1]))
        reading = _("read where the word is the decoder's input") if shifted else _("read at the step that outputs the word")
        verdict = (_("the heads that align better tend to matter more") if value >= 0.3 else
                   _("the heads that align better tend to matter less") if value <= -0.3 else
                   _("how well a head aligns says little about how much it matters"))
        text += " " + _("Across the cross-attention's heads, AER ({reading}) and the log-probability lost have a rank "
                        "correlation of {r:+.2f}: {verdict}.").format(reading=reading, r=value, verdict=verdict)
    return text
