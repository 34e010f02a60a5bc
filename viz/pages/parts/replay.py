"""Training replay: watch attention learn to align (``model/training/replay.py`` records it).

A slider over the training updates a pair of cards recorded; at each point, every model's
output for the chosen probe sentence, its validation BLEU then, and, for RNNsearch, its
attention over the probe. RNNencdec has no attention to show: only its output, so the contrast
with RNNsearch's sharpening heatmap is visible side by side.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from model.cards.schema import Card
from model.training.replay import Snapshot
from viz.figures.heatmap import alignment_matrix
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import _, ltr
from viz.pages.parts.safe_text import md


def replay_ui(cards: list[Card], key: str) -> None:
    """The replay of ``cards`` (models trained together record the same probes at the same
    updates); a note instead when none of them carries one."""
    cards = [card for card in cards if card.replay]
    if not cards:
        st.info(_("These models' cards carry no training replay (it is recorded by training runs of this project "
                  "that validate with probe sentences; see model/training/replay.py)."))
        return
    probes = [p.source for p in cards[0].replay[0].probes]
    choice = st.selectbox(_("Probe sentence"), range(len(probes)), format_func=probes.__getitem__, key=f"{key}_probe")
    steps = sorted({s.step for card in cards for s in card.replay})
    step = st.select_slider(_("Training update"), steps, value=steps[-1], key=f"{key}_step",
                            help=_("Update 0 is the untrained model; then one point per validation."))
    for column, card in zip(st.columns(len(cards)), cards):
        with column:
            snapshot_ui(card, at_step(card.replay, step), choice, f"{key}_{card.name}")


def at_step(snapshots: tuple[Snapshot, ...], step: int) -> Snapshot:
    """The last snapshot at or before ``step`` (the first one when all are later)."""
    earlier = [s for s in snapshots if s.step <= step]
    return earlier[-1] if earlier else snapshots[0]


def snapshot_ui(card: Card, snapshot: Snapshot, probe: int, key: str) -> None:
    if probe >= len(snapshot.probes):
        st.caption(_("{model} recorded no such probe.").format(model=ltr(md(card.name))))
        return
    record = snapshot.probes[probe]
    st.markdown(_("**{model}** ({arch}) at update {step:,}: {bleu}").format(
        model=ltr(md(card.name)), arch=ltr(card.arch), step=snapshot.step, bleu=_bleu(snapshot.val_bleu)))
    st.text(record.output or _("(empty output)"))
    if record.attention is None:
        st.caption(_("RNNencdec has no attention: the whole source reaches the decoder as one vector."))
        return
    title = _("attention α at update {step:,}").format(step=snapshot.step)
    chart_ui(alignment_matrix(record.attention, record.source_tokens, record.target_tokens, title=title, grayscale=True),
             key=f"{key}_heatmap")
    st.caption(_("Recorded during training: how faithful this attention was cannot be measured now (the weights of "
                 "that update are not kept). The finished model's heatmaps, on the Translate page, say how faithful "
                 "they are."))


def _bleu(val_bleu: Optional[float]) -> str:
    return _("untrained") if val_bleu is None else _("validation BLEU {bleu:.2f} (greedy)").format(bleu=val_bleu)
