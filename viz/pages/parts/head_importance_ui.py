"""Do the heads that align matter? A Transformer's recorded head importance beside its AER grid,
on the Alignment and Paper pages (viz/figures/head_importance.py draws the figures)."""
from __future__ import annotations

import streamlit as st

from model.cards.schema import HeadImportanceRecord
from viz.figures.head_importance import KIND_LABELS, importance_figure, pruning_figure, summary_text
from viz.i18n import _, ltr
from viz.pages.parts.canvas_charts import chart_ui


def heads_matter_ui(record: HeadImportanceRecord, name: str, key: str) -> None:
    """The cross-attention's importance grid and the pruning curve side by side, the other
    attentions' grids in an expander, two sentences that read them, and the command."""
    st.markdown(_("**Do the heads that align matter?** Each head switched off alone (its output multiplied by 0), "
                  "the log-probability per word the model then loses on its own translations; darker heads matter more "
                  "(Michel et al. 2019; Voita et al. 2019)."))
    left, right = st.columns(2)
    with left:
        chart_ui(importance_figure(record, "cross", _("{model}: cross-attention, log p lost with the head off").format(
            model=ltr(name))), key=f"importance_{key}_cross")
    with right:
        if record.pruning:
            chart_ui(pruning_figure(record, ltr(name)), key=f"importance_{key}_pruning")
    st.caption(summary_text(record))
    with st.expander(_("The other attentions, and how this was measured")):
        for kind in ("encoder", "decoder_self"):
            if any(h.kind == kind for h in record.heads):
                chart_ui(importance_figure(record, kind, _(KIND_LABELS[kind])), key=f"importance_{key}_{kind}")
        if record.command:
            st.code(record.command, language="bash", wrap_lines=True)
