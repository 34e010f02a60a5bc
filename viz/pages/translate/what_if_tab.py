"""The What if tab: force another token at a step, or put all the attention on one source word,
and decode again beside the original."""
from __future__ import annotations

from typing import Optional

import streamlit as st

from model.decoding.cross_attention import (default_choice)
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.core.errors import NoHypothesisError
from viz.figures.heatmap import alignment_matrix
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, error_text
from viz.pages.parts.serving_ui import decode_one_for_page
from viz.serving.decodes import Decoded, Request
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import attention_check_ui
from viz.pages.translate.model_picker import pick_model


def what_if_tab(results: list[Decoded], text: str, search: SearchConfig, settings: AppSettings) -> None:
    result = pick_model(results, "whatif_model")
    name, trace = result.name, result.trace
    if not trace.topk:
        return
    step = st.number_input(_("At step"), 1, len(trace.topk), 1, key="whatif_step")
    i = int(step) - 1
    options = {f"{c.token} (p={c.prob:.3f})": c.id for c in trace.topk[i] if c.prob > 0}
    modes = {mode: _(mode) for mode in (N_("the token"), N_("the attention"))}  # values stay English: compared below
    editable = trace.attention is not None and result.translator.model.supports_attention_edit
    mode = st.radio(_("Change"), list(modes), horizontal=True, key="whatif_mode", format_func=modes.get,
                    disabled=not editable)
    if trace.attention is not None and not editable:
        st.caption(_("This model's attention cannot be moved here: it runs inside the model's own code, which "
                     "computes its weights and uses them at once. Forcing a token works as for every model."))
    try:
        if mode == "the token" or not editable:
            choice = st.selectbox(_("Force this token instead"), list(options), key="whatif_token")
            new = decode_one_for_page(Request(name, text, search, prefix=tuple(trace.target_ids[:i] + [options[choice]])),
                            settings)
        else:
            if trace.cross_attention is not None:
                layer = default_choice(trace).layer
                st.caption(_("This model has an attention in every layer: the change replaces every head's weights "
                             "in layer {layer}, the one its views show; the other layers keep computing their own.")
                           .format(layer=layer + 1))
            labels = [f"{j}: {t}" for j, t in enumerate(trace.source_tokens)]
            j = st.selectbox(_("Put all attention on"), range(len(labels)), format_func=labels.__getitem__,
                             key="whatif_source")
            new = decode_one_for_page(Request(name, text, search, attend=(i, int(j))), settings)
    except NoHypothesisError as exc:
        st.warning(_("No translation under that change: {reason}").format(reason=error_text(exc)))
        return
    _compare(result, new.trace, None if mode == "the token" else i, settings)


def _compare(result: Decoded, new: Trace, moved: Optional[int], settings: AppSettings) -> None:
    """The decode and the what-if decode side by side (``moved``: the step whose attention was
    put on one source word, or None when a token was forced), each heatmap with its check."""
    for column, (label, trace) in zip(st.columns(2), ((N_("Original"), result.trace), (N_("What if"), new))):
        with column:  # the English label names the chart's key
            st.markdown(_("**{label}** · score {score:.3f}").format(label=_(label), score=trace.score))
            st.text(trace.translation)
            if trace.attention is not None:
                chart_ui(alignment_matrix(trace.attention, trace.source_tokens, trace.target_tokens),
                          key=f"whatif_heatmap_{label}")
                if trace is new and moved is not None:
                    st.caption(_("Not checked for faithfulness: at step {step} these weights were put there, "
                                 "not learnt.").format(step=moved + 1))
                else:
                    attention_check_ui(result.name, result.translator, trace, settings, short=True)
