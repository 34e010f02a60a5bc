"""The Step by step tab: one decoder step at a time, its attention, energies and next-token
distribution, with Play; for a Transformer that can be taken apart, each decoder layer's own
reading of the word written (the logit lens)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from model.decoding.cross_attention import (default_choice)
from model.explaining import registry
from model.explaining.logit_lens import LogitLens
from viz.figures.decoding_step import energies_bar, source_strip, topk_bar
from viz.figures.heatmap import alignment_matrix, display_token, token_text
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import _, ltr
from viz.pages.parts.safe_text import md
from viz.serving import decode_views
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import attention_check_ui
from viz.pages.translate.model_picker import pick_model


PLAY_INTERVAL_S = 0.7


def step_tab(results: list[Decoded], settings: AppSettings) -> None:
    result = pick_model(results, "step_model")
    if not result.trace.target_ids:
        return
    playing = st.session_state.get("step_playing", False)
    # Only the step view reruns while stepping or playing, not the page (a fragment).
    st.fragment(step_view, run_every=PLAY_INTERVAL_S if playing else None)(result, settings)


def advance(step: int, n_steps: int, playing: bool) -> tuple[int, bool]:
    """Playback: the next step to show and whether playing goes on after it."""
    if not playing:
        return step, False
    step = min(step + 1, n_steps)
    return step, step < n_steps


def step_view(result: Decoded, settings: AppSettings) -> None:
    trace = result.trace
    n = len(trace.target_ids)
    state = st.session_state
    if state.get("step_playing"):
        state["step"], state["step_playing"] = advance(state.get("step", 1), n, True)
        if not state["step_playing"]:
            st.rerun()  # the whole page, once: the fragment stops ticking
    step = step_controls(n)
    i = step - 1
    partial = result.translator.tgt_vocab.decode(trace.target_ids[:step])
    st.markdown(_("**Partial translation:** {text}").format(text=ltr(md(partial))))
    st.caption(_("Step {step} of {n} chose “{token}” with p = {p:.3f}")
               .format(step=step, n=n, token=ltr(display_token(trace.target_tokens[i])),
                       p=np.exp(trace.step_logprobs[i])))
    if trace.attention is None:
        st.info(_("RNNencdec has no attention: every step sees the same fixed summary of the source. "
                  "What it does have is a distribution over next tokens:"))
    else:
        title = _("attention α_{step}j at step {step}").format(step=step)
        if trace.cross_attention is not None:  # α is one layer's heads' mean: say which
            own = default_choice(trace).layer
            title = _("attention at step {step}: layer {layer}, mean of its heads").format(step=step, layer=own + 1)
        strip = source_strip(trace.attention[i], trace.source_tokens, title)
        chart_ui(strip, key="step_strip")
        attention_check_ui(result.name, result.translator, trace, settings, short=True)
        if trace.cross_attention is not None:  # every layer's row at this step, each the mean of its heads
            layers = trace.cross_attention[:, :, i].mean(1)  # (layers, src_len)
            labels = [_("layer {layer}").format(layer=k + 1) for k in range(len(layers))]
            chart_ui(alignment_matrix(layers, trace.source_tokens, labels,
                                      title=_("every layer's cross-attention at step {step} (mean of its heads)")
                                      .format(step=step), row_name=_("decoder layer")), key="step_layers")
        if trace.energies is not None:
            chart_ui(energies_bar(trace.energies[i], trace.source_tokens), key="step_energies")
        else:
            st.caption(_("This model does not expose its energies e_ij before the softmax; only α is shown."))
    chart_ui(topk_bar(trace.topk[i], trace.target_ids[i]), key="step_topk")
    logit_lens_ui(result, i, settings)


def logit_lens_ui(result: Decoded, i: int, settings: AppSettings) -> None:
    """Each decoder layer's rank and probability of the word written at step ``i + 1``, and its
    own first choices (model/explaining/logit_lens.py), for a model that can be taken apart layer
    by layer; one line on why not for another model with layers (an imported Transformer)."""
    model, trace = result.translator.model, result.trace
    if not model.supports_anatomy:
        if trace.cross_attention is not None:
            st.caption(_("No logit lens for {name}: the lens {reason}.")
                       .format(name=ltr(md(result.name)), reason=_(registry.UNSUPPORTED)))
        return
    lens = decode_views.logit_lens_of(result, settings)
    word = ltr(md(token_text(trace.target_tokens[i])))
    st.markdown(_("**Layer by layer (logit lens):** “{token}” as each decoder layer would rank it").format(token=word))
    columns = [_("decoder layer"), _("rank"), _("probability"), _("the layer's first choices")]
    st.dataframe(pd.DataFrame(lens_rows(lens, i, result.translator.tgt_vocab.pieces), columns=columns),
                 hide_index=True, key="step_lens")
    first = int(lens.first_layer()[i])
    settled = (_("“{token}” is the first choice from layer {layer} on.").format(token=word, layer=first) if first else
               _("“{token}” is not the last layer's first choice: the beam kept it for the sentence's score.")
               .format(token=word))
    st.caption(settled + " " + _("Each row reads that layer's state through the final LayerNorm and output layer "
                                 "as if it were the last; the layers before the last were never trained to be read "
                                 "this way, so an early rank 1 is evidence that the word was settled there and a "
                                 "high rank is no proof that it was not."))


def lens_rows(lens: LogitLens, i: int, pieces: Callable[[Sequence[int]], list[str]]) -> list[list]:
    """One row per decoder layer for output position ``i``: its number (1-based), the written
    word's rank and probability, and the layer's first choices as "piece p" (``pieces``: ids to
    the target vocabulary's pieces)."""
    rows = []
    for layer in range(lens.layers):
        tops = pieces(lens.top_ids[layer, i])
        choices = ", ".join(f"{token_text(t)} {p:.2f}" for t, p in zip(tops, lens.top_probs[layer, i]))
        rows.append([layer + 1, int(lens.ranks[layer, i]), round(float(lens.probs[layer, i]), 3), choices])
    return rows


def step_controls(n_steps: int) -> int:
    """Slider over steps with previous / next / play (the buttons change the slider's state)."""
    state = st.session_state
    state["step"] = min(max(1, state.get("step", 1)), n_steps)
    move = lambda d: state.update(step=min(max(1, state["step"] + d), n_steps))  # noqa: E731
    prev_col, next_col, play_col, _spare = st.columns([1, 1, 1, 5])  # not "_": that is the translator
    prev_col.button(_("◀ Previous"), key="step_prev", on_click=move, args=(-1,))
    next_col.button(_("Next ▶"), key="step_next", on_click=move, args=(1,))
    if play_col.button(_("Play ▶▶"), key="step_play", help=_("Step through the whole decode")):
        state.update(step=0, step_playing=n_steps > 1)  # the first tick shows step 1
        st.rerun()  # the whole page: the fragment starts ticking
    if n_steps > 1:
        st.slider(_("Decoding step"), 1, n_steps, key="step", persist_state="session")
    if state["step"] != 1 or "step" in st.query_params:  # fragment reruns don't reach the page's URL update
        st.query_params["step"] = str(state["step"])
        state.setdefault("view_written", {})["step"] = str(state["step"])
    return state["step"]
