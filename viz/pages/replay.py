"""Training replay: watch attention learn to align (``model/training/replay.py`` records it).

A slider over the training updates a pair of cards recorded; at each point, every model's
output for the chosen probe sentence, its validation BLEU then, and, for RNNsearch, its
attention over the probe. RNNencdec has no attention to show: only its output, so the contrast
with RNNsearch's sharpening heatmap is visible side by side.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from model.checkpoints.card_schema import Card
from model.training.replay import Snapshot
from viz.figures.heatmap import alignment_heatmap
from viz.pages import widgets
from viz.pages.safe_text import md


def replay_ui(cards: list[Card], key: str) -> None:
    """The replay of ``cards`` (models trained together record the same probes at the same
    updates); a note instead when none of them carries one."""
    cards = [card for card in cards if card.replay]
    if not cards:
        st.info("These models' cards carry no training replay (it is recorded by training runs of this project "
                "that validate with probe sentences; see model/training/replay.py).")
        return
    probes = [p.source for p in cards[0].replay[0].probes]
    choice = st.selectbox("Probe sentence", range(len(probes)), format_func=probes.__getitem__, key=f"{key}_probe")
    steps = sorted({s.step for card in cards for s in card.replay})
    step = st.select_slider("Training update", steps, value=steps[-1], key=f"{key}_step",
                            help="Update 0 is the untrained model; then one point per validation.")
    for column, card in zip(st.columns(len(cards)), cards):
        with column:
            snapshot_ui(card, at_step(card.replay, step), choice, f"{key}_{card.name}")


def at_step(snapshots: tuple[Snapshot, ...], step: int) -> Snapshot:
    """The last snapshot at or before ``step`` (the first one when all are later)."""
    earlier = [s for s in snapshots if s.step <= step]
    return earlier[-1] if earlier else snapshots[0]


def snapshot_ui(card: Card, snapshot: Snapshot, probe: int, key: str) -> None:
    if probe >= len(snapshot.probes):
        st.caption(f"{md(card.name)} recorded no such probe.")
        return
    record = snapshot.probes[probe]
    st.markdown(f"**{md(card.name)}** ({card.arch}) at update {snapshot.step:,}: "
                f"{_bleu(snapshot.val_bleu)}")
    st.text(record.output or "(empty output)")
    if record.attention is None:
        st.caption("RNNencdec has no attention: the whole source reaches the decoder as one vector.")
        return
    widgets.show_chart(alignment_heatmap(record.attention, record.source_tokens, record.target_tokens,
                                         title=f"attention α at update {snapshot.step:,}", grayscale=True),
                       key=f"{key}_heatmap")


def _bleu(val_bleu: Optional[float]) -> str:
    return "untrained" if val_bleu is None else f"validation BLEU {val_bleu:.2f} (greedy)"
