"""The Alignment tab: each model's attention heatmap, and a Transformer's layer, head and reading
(one head, a layer's mean, every head of a layer; the shifted reading)."""
from __future__ import annotations

from typing import Optional

import numpy as np
import streamlit as st

from model.decoding.cross_attention import (ChoiceWords, HeadChoice, default_choice, every_head,
                                            shifted_cross_attention, view_matrix)
from model.explaining.faithfulness import checkable
from viz.figures.heatmap import alignment_matrix, merge_to_words, with_links
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, ltr
from viz.pages.parts.safe_text import md
from viz.pages.parts.url_state import HeadsPick
from viz.serving import statistical_overlay
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import attention_check_ui, heatmap_check_ui


HEADS_HOW_TO_READ = N_(
    "**Layers and heads.** A Transformer has no single α: each of its decoder layers has its own "
    "cross-attention over the source, computed from what the layers below made of the words so far, and each "
    "layer splits it into several **heads**, each with its own projections of the queries and keys, free to look "
    "for something else (the next word's source, its neighbours, punctuation). Pick a layer and show its heads' "
    "mean, one head, or every head side by side. Row i is normally read at the step that outputs word i; the "
    "**shifted** reading takes the next step, where word i is the decoder's input, which aligns better in some "
    "layers.")


def alignment_tab(results: list[Decoded], settings: AppSettings) -> None:
    words = st.toggle(_("Whole words instead of subword pieces"), key="align_words",
                      help=_("Source pieces of a word are summed; target pieces of a word are averaged, "
                             "so each row still sums to 1."))
    gray = st.toggle(_("Grayscale (the paper's Figure 3 look)"), value=True, key="align_gray")
    overlay = statistical_overlay.available() and st.toggle(
        _("Overlay a statistical aligner's links (eflomal)"), key="align_statistical",
        help=_("eflomal, trained on a sample of the model's own training text plus this sentence pair, links words "
               "by co-occurrence statistics alone; its links are drawn as circles over the attention (whole "
               "words)."))
    for result in results:
        if result.trace.attention is None:
            st.info(_("{name} is an RNNencdec model: it has no attention. It reads the whole sentence "
                      "into one fixed vector. See the Explanations tab for what its output depends on.")
                    .format(name=ltr(md(result.name))))
    attended = [r for r in results if r.trace.attention is not None]
    layered = [r for r in attended if r.trace.cross_attention is not None]
    picked = None
    if layered:
        st.caption(_(HEADS_HOW_TO_READ))
        picked = heads_ui(layered)
    # every head of a layer is a grid of small heatmaps: it gets the page's whole width below the
    # other models' heatmaps (in half a page each head would be a few pixels a source word)
    every = picked is not None and picked.kind == "every"
    grids = layered if every else []
    singles = [(side, r) for side, r in enumerate(attended) if not (every and r.trace.cross_attention is not None)]
    if singles:  # beside a grid a heatmap keeps its half of the page, on its model's side
        columns = st.columns(2 if grids else len(singles))
        for position, (side, result) in enumerate(singles):
            with columns[side if grids else position]:
                heatmap_ui(result, picked, words, overlay, gray, settings)
    for result in grids:
        choice = choice_for(picked, result)
        st.markdown(_("**{name}**: every head of layer {layer}").format(name=ltr(md(result.name)),
                                                                          layer=choice.layer + 1))
        heads_grid_ui(result, heads_of(result, choice.shifted), choice, words or overlay, gray)


def heatmap_ui(result: Decoded, picked: Optional[HeadsPick], words: bool, overlay: bool, gray: bool,
               settings: AppSettings) -> None:
    """One model's alignment heatmap (a layered model's: the layer or head ``picked``), its
    eflomal links when ``overlay``, and how faithful it is."""
    trace = result.trace
    matrix, title = trace.attention, _("{name}: attention α").format(name=ltr(result.name))
    if trace.cross_attention is not None:
        choice = choice_for(picked, result)
        matrix = view_matrix(trace, choice, shifted=heads_of(result, True) if choice.shifted else None)
        title = _("{name}: cross-attention, {which}").format(name=ltr(result.name), which=choice_text(choice))
    pieces, src, tgt = matrix, trace.source_tokens, trace.target_tokens  # (tgt_len, src_len) as the model read them
    if words or overlay:
        matrix, src, tgt = merge_to_words(matrix, src, tgt)
    fig = alignment_matrix(matrix, src, tgt, title=title, grayscale=gray)  # drawn on a canvas: no plotly on the landing tab
    if overlay:
        with st.spinner(_("Reading the model's training text...")):
            statistical_overlay.training_sample(result.name, settings)  # once per server
        with st.spinner(_("Aligning with eflomal...")):
            links = statistical_overlay.statistical_links(result.name, settings, src, [w for w in tgt if w != "</s>"])
        if links is None:
            st.caption(_("The training text of {name} is not on this server: no eflomal links.")
                       .format(name=ltr(md(result.name))))
        else:
            fig = with_links(fig, links, _("eflomal links"))
    chart_ui(fig, key=f"heatmap_{result.name}")
    if trace.cross_attention is None:
        attention_check_ui(result.name, result.translator, result.trace, settings)
    elif checkable(trace):
        heatmap_check_ui(result.name, result.translator, trace.source_ids, trace.target_ids, pieces, settings)


def choice_for(pick: HeadsPick, result: Decoded) -> HeadChoice:
    """``pick`` for ``result``'s model (a layer or head it lacks: its last one); for "every head",
    the layer (``head`` None)."""
    layers, heads = result.trace.cross_attention.shape[:2]
    own = default_choice(result.trace).layer
    layer = own if pick.layer == 0 else min(pick.layer, layers) - 1
    head = min(pick.head, heads) - 1 if pick.kind == "one" else None
    return HeadChoice(layer, head, pick.shifted)


def apply_heads(pick: HeadsPick) -> None:
    """Put ``pick`` into the picker's widgets' state (a link's view)."""
    st.session_state.update(heads_layer=pick.layer, heads_kind=pick.kind, heads_head=pick.head,
                            heads_shifted=pick.shifted)


def heads_pick() -> HeadsPick:
    """The pick the picker's widgets hold now (the default before they are drawn)."""
    state = st.session_state
    return HeadsPick(int(state.get("heads_layer", 0)), state.get("heads_kind", "mean"), int(state.get("heads_head", 1)),
                     bool(state.get("heads_shifted", False)))


def heads_ui(layered: list[Decoded]) -> HeadsPick:
    """One picker of layer, heads and reading for every model with several attentions
    (``Trace.cross_attention``) on the page."""
    layers = max(r.trace.cross_attention.shape[0] for r in layered)
    heads = max(r.trace.cross_attention.shape[1] for r in layered)
    state = st.session_state
    for key, top in (("heads_layer", layers), ("heads_head", heads)):  # a link may name one these models lack
        if key in state and not 0 <= int(state[key]) <= top:
            state[key] = min(max(int(state[key]), 1 if key == "heads_head" else 0), top)
    left, middle, right = st.columns(3)
    left.selectbox(_("Layer"), range(layers + 1), key="heads_layer",
                   format_func=lambda i: _("the one its views show") if i == 0 else str(i))
    shown = {"mean": _("mean of the heads"), "one": _("one head"), "every": _("every head")}
    kind = middle.radio(_("Heads"), list(shown), format_func=shown.get, key="heads_kind")
    if kind == "one":
        right.selectbox(_("Head"), range(1, heads + 1), key="heads_head")
    st.toggle(_("Shifted reading (the step where the word is the decoder's input)"), key="heads_shifted")
    pick = heads_pick()
    write_heads_param(pick.param())  # the tab reruns alone (a fragment): the page's URL update does not run
    return pick


def write_heads_param(value: str) -> None:
    """Keep the URL's ``heads`` in step with the picker, as the page's own write would."""
    written = st.session_state.setdefault("view_written", {})
    if value:
        st.query_params["heads"] = written["heads"] = value
    elif "heads" in st.query_params:
        del st.query_params["heads"]
        written.pop("heads", None)


def choice_text(choice: HeadChoice) -> str:
    """``choice`` in the reader's language."""
    return choice.label(ChoiceWords(_("layer {layer}, head {head}"), _("layer {layer}, mean of its heads"),
                                    _(", shifted")))


def heads_of(result: Decoded, shifted: bool) -> np.ndarray:
    """(layers, heads, tgt_len, src_len): the trace's cross-attention, or its shifted reading
    (one teacher-forced pass of the model, kept for the session)."""
    trace = result.trace
    if not shifted:
        return trace.cross_attention
    kept = st.session_state.setdefault("shifted_heads", {})
    key = (result.name, tuple(trace.source_ids), tuple(trace.target_ids))
    if key not in kept:
        kept.clear()  # one sentence's at a time
        kept[key] = shifted_cross_attention(result.translator.model, trace.source_ids, trace.target_ids)
    return kept[key]


def heads_grid_ui(result: Decoded, cross: np.ndarray, choice: HeadChoice, words: bool, gray: bool) -> None:
    """Every head of the chosen layer, side by side (small multiples)."""
    trace = result.trace
    found = every_head(cross, choice.layer, choice.shifted)
    for start in range(0, len(found), 2):
        for column, (one, matrix) in zip(st.columns(2), found[start:start + 2]):
            with column:
                head, src, tgt = one.head, trace.source_tokens, trace.target_tokens
                if words:
                    matrix, src, tgt = merge_to_words(matrix, src, tgt)
                chart_ui(alignment_matrix(matrix, src, tgt, title=choice_text(one), grayscale=gray),
                         key=f"heatmap_{result.name}_head_{head}")
