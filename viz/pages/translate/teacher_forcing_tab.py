"""The Teacher forcing tab: the model's attention given the reference's prefix beside its own."""
from __future__ import annotations


import numpy as np
import pandas as pd
import streamlit as st

from model.core.errors import UserError
from viz.figures.heatmap import alignment_matrix
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.examples import example_reference
from viz.i18n import _, error_text, ltr
from viz.pages.parts.safe_text import md
from viz.serving import teacher_forcing
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import heatmap_check_ui
from viz.pages.translate.model_picker import pick_model


def teacher_forcing_tab(results: list[Decoded], text: str, settings: AppSettings) -> None:
    result = pick_model(results, "tf_model")
    reference = st.text_input(_("Reference translation"), key="tf_reference", max_chars=2000,
                              placeholder=_("The translation the model should have given"))
    if not reference.strip():
        known = example_reference(text, st.session_state.get("direction", ""))
        if known is None:
            st.info(_("Type a reference translation of the sentence above to compare the two prefixes."))
            return
        st.info(_("Type a reference translation of the sentence above to compare the two prefixes, or use the one "
                  "written for this example: {reference}").format(reference=ltr(md(known))))
        st.button(_("Use this reference"), key="tf_use_example", on_click=st.session_state.update,
                  kwargs={"tf_reference": known})
        return
    try:
        with st.spinner(_("Forcing the model through the reference...")):
            found = teacher_forcing.compare_prefixes(result.name, text, reference, settings)
    except UserError as exc:
        st.error(md(error_text(exc)))
        return
    st.markdown((_("The decode follows the reference to its end.") if found.diverges_at is None else
                 _("The decode leaves the reference at step {step}.").format(step=found.diverges_at + 1)) + " " +
                _("Given the reference's prefix, the model ranks {share} of the reference's tokens first.").format(
                    share=f"{found.forced_accuracy:.0%}"))
    headers = [_("step"), _("reference"), _("given the reference's prefix"), _("decode"), _("given its own prefix")]

    def top(cands) -> str:
        return ", ".join(f"{c.token} {c.prob:.2f}" for c in cands[:3])

    rows = [[f"{i + 1}{' ◀' if found.diverges_at == i else ''}", s.reference or "", top(s.forced), s.free or "",
             top(s.free_candidates)] for i, s in enumerate(found.steps)]
    st.dataframe(pd.DataFrame(rows, columns=headers), hide_index=True, key="tf_table")
    forced_rows = [s.forced_attention for s in found.steps if s.forced_attention is not None]
    free_rows = [s.free_attention for s in found.steps if s.free_attention is not None]
    if not forced_rows:
        return
    for column, (side, title, matrix, tokens, ids) in zip(st.columns(2), (
            ("forced", _("{name}: attention given the reference's prefix"), forced_rows, found.reference_tokens,
             found.reference_ids),
            ("free", _("{name}: attention given its own prefix"), free_rows, found.free.target_tokens,
             found.free.target_ids))):
        matrix = np.stack(matrix)  # (rows, source tokens)
        with column:
            chart_ui(alignment_matrix(matrix, found.source_tokens, tokens[:len(matrix)],
                                       title=title.format(name=ltr(result.name))), key=f"tf_{side}_{result.name}")
            heatmap_check_ui(result.name, result.translator, found.free.source_ids, ids[:len(matrix)], matrix,
                             settings, short=True)
