"""The Translate page's seven views of one decode. Tabs track which one is open, and only the
open tab's function runs: explanations (backward passes per output token) and what-if
re-decoding cost nothing until their tab is opened. Each view starts with "how to read this",
open on the first visit and collapsed after.
"""
from __future__ import annotations

import json
from typing import Optional, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from model.decoding.cross_attention import (ChoiceWords, HeadChoice, default_choice, every_head,
                                            shifted_cross_attention, view_matrix)
from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.explaining import registry
from model.explaining.explanation import LAYERS
from model.explaining.faithfulness import checkable
from model.core.errors import NoHypothesisError, UserError
from viz import html_report
from viz.figures.beam_tree import beam_tree
from viz.figures.decoding_step import energies_bar, source_strip, topk_bar
from viz.figures import print_figures
from viz.figures.explanation_shares import shares_bar
from viz.figures.faithfulness_curves import curve_panels
from viz.figures.heatmap import alignment_matrix, display_token, merge_to_words, pharaoh, with_links
from viz.figures.method_labels import method_label
from viz.pages.parts import first_paint, widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.examples import example_reference
from viz.i18n import N_, _, error_text, ltr, ngettext
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import decode_one_for_page
from viz.pages.parts.url_state import TABS, HeadsPick
from viz.serving import explanations, statistical_overlay, teacher_forcing
from viz.serving.decodes import Decoded, Request
from viz.serving.settings import AppSettings

# The tabs' labels in English: links and other code set the tabs' state ("tab") to one of these;
# the tabs show them translated (widgets.tabs_ui moves a label of any language to this one's).
LABELS = dict(zip(TABS, [N_("Alignment"), N_("Step by step"), N_("Beam tree"), N_("What if"), N_("Explanations"),
                         N_("Teacher forcing"), N_("Downloads")]))
PLAY_INTERVAL_S = 0.7
_STATUS_NAMES = (N_("pruned"), N_("kept"), N_("finished"), N_("best"))  # a beam node's status, shown through _()
HOW_TO_READ = {  # shown through _()
    "alignment": N_("Each **row** is one output piece, each **column** one source piece. "
                    "A cell is α_ij, the weight RNNsearch gave source piece j while choosing output piece i "
                    "(the paper's Figure 3); darker is more, and every row sums to 1. A clean diagonal means "
                    "word-by-word order; off-diagonal blocks are reordering (French puts most adjectives after "
                    "the noun; German puts the verb of a subordinate clause at its end). RNNencdec has no α: "
                    "it reads the sentence into one vector c."),
    "steps": N_("One decoder step at a time. The strip shows α_i over the source (where the model looks); the "
                "bars below it are the energies e_ij before the softmax (α_i = softmax_j e_ij); the last chart "
                "is the model's distribution over the next piece, with the chosen one marked. Play walks "
                "through every step."),
    "beam": N_("Beam search keeps the B best partial translations at each step. Each node is a hypothesis "
               "ending in the piece shown; its parent is the hypothesis it extends. **Kept** nodes stay in the "
               "beam, **pruned** ones were among the 2B candidates scored but fell outside the beam, "
               "**finished** ones ended with </s> (or reached the model's own length cap, where a Joey NMT "
               "model's search stops), and the **best** path is the returned translation. "
               "Click a node to read its text and its attention."),
    "whatif": N_("Force a different piece at one step, or put all attention on one source piece, and decode the "
                 "rest again: how much does one decision change the whole translation?"),
    "explanations": N_("Each method says which source words (and which words already written) each output word "
                       "depends on: attention α; norm-weighted attention ‖α_ij h_j‖, what each word actually adds "
                       "to the context; gradient × input; integrated gradients, which add up to the change in "
                       "log-probability from a blank input; occlusion, the log-probability lost without the word. "
                       "The bars split each output word's explanation between the source sentence and the words "
                       "already written. Faithfulness: remove the source words a method ranks first and re-score "
                       "the same output; if the log-probability falls fast (low deletion area, high "
                       "comprehensiveness), the method found what the model used. A random order is the yardstick."),
    "teacher": N_("Models are trained with teacher forcing: at every step they are shown the reference's words so "
                  "far and asked for the next one. When they translate, they are shown their own words instead. "
                  "Type the reference translation: each row is one step, with the model's top choices given the "
                  "reference's prefix (what training showed it) beside its choices given its own prefix (what "
                  "decoding shows it). The first row where the two outputs differ is marked; after it the model "
                  "reads its own mistakes, which it never saw in training."),
    "downloads": N_("The full trace as JSON (schema in model/decoding/trace.py) and the alignment in Pharaoh i-j "
                    "format."),
}

HEADS_HOW_TO_READ = N_(
    "**Layers and heads.** A Transformer has no single α: each of its decoder layers has its own "
    "cross-attention over the source, computed from what the layers below made of the words so far, and each "
    "layer splits it into several **heads**, each with its own projections of the queries and keys, free to look "
    "for something else (the next word's source, its neighbours, punctuation). Pick a layer and show its heads' "
    "mean, one head, or every head side by side. Row i is normally read at the step that outputs word i; the "
    "**shifted** reading takes the next step, where word i is the decoder's input, which aligns better in some "
    "layers.")


# Tabs whose widgets rerun the tab alone (a fragment): a toggle or a pick there re-sends that tab,
# not the page's translations, pickers and sidebar. (The step view is a fragment of its own.)
ALONE = ("alignment", "beam", "whatif", "explanations", "teacher")


def tab_slug() -> str:
    """The open tab's slug, from the tabs' state (a label, English or in the page's language)."""
    shown = st.session_state.get("tab")
    return next((slug for slug, label in LABELS.items() if shown in (label, _(label))), "alignment")


def render(results: list[Decoded], text: str, search: SearchConfig, settings: AppSettings) -> str:
    """Draw the tabs and run the open one (``search``: the decoding the results used); returns
    its slug (for the URL)."""
    tabs = widgets.tabs_ui(LABELS, key="tab")  # its state: set by the page from links
    views = {"alignment": lambda: alignment_tab(results, settings), "steps": lambda: step_tab(results, settings),
             "beam": lambda: beam_tab(results, settings), "whatif": lambda: what_if_tab(results, text, search, settings),
             "explanations": lambda: explanations_tab(results, settings),
             "teacher": lambda: teacher_forcing_tab(results, text, settings), "downloads": lambda: downloads_tab(results, settings)}
    opened = "alignment"
    for (slug, view), tab in zip(views.items(), tabs):
        if tab.open is False:  # None (state not tracked) would mean: run every tab
            continue
        opened = slug
        with tab:
            how_to_read(slug)
            st.fragment(view)() if slug in ALONE else view()
    return opened


def report(text: str, results: list[Decoded], settings: AppSettings) -> str:
    """The Downloads tab's HTML report, with the check under each heatmap (``attention_check_ui``'s)."""
    return html_report.report_html(text, [(r.name, r.trace) for r in results],
                                   {r.name: explanations.attention_check(r.name, r.translator, r.trace, settings)
                                    for r in results})


def print_figure(result: Decoded, kind: str, settings: AppSettings) -> bytes:
    """The paper's Figure 3 look of ``result``'s attention as a ``kind`` file, with how faithful
    it is under it (matplotlib is imported by the first one made: 0.4 s)."""
    trace = result.trace
    check = explanations.attention_check(result.name, result.translator, trace, settings)
    return print_figures.figure_bytes(print_figures.alignment_figure(
        trace.attention, trace.source_tokens, trace.target_tokens,
        note="" if check is None else html_report.check_sentence(check)), kind)


def how_to_read(slug: str) -> None:
    visited = st.session_state.setdefault("tabs_visited", set())
    with st.expander(_("How to read this"), expanded=slug not in visited, icon=":material/help:"):
        st.markdown(_(HOW_TO_READ[slug]))
    visited.add(slug)


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


def attention_check_ui(name: str, translator: Translator, trace: Trace, settings: AppSettings,
                       short: bool = False) -> None:
    """``heatmap_check_ui`` of ``trace``'s attention heatmap (``translator``, model ``name``, made it)."""
    if checkable(trace):
        heatmap_check_ui(name, translator, trace.source_ids, trace.target_ids, trace.attention, settings, short)


def heatmap_check_ui(name: str, translator: Translator, src_ids: Sequence[int], out_ids: Sequence[int],
                     matrix: np.ndarray, settings: AppSettings, short: bool = False) -> None:
    """How faithful the attention heatmap ``matrix`` (len(out_ids), len(src_ids)) is, for this
    pair: what the output loses when the most-attended source words go, against as many random
    words (``explanations.heatmap_check``, re-scored by ``translator``, model ``name``). A check
    not made before waits for the browser to draw this run (``first_paint.after_paint``): the
    translation comes first."""
    key = explanations.heatmap_key(name, translator, src_ids, out_ids, matrix)
    if key is None:
        return
    check = explanations.known_check(key)
    if check is None:
        if not first_paint.after_paint(("attention_check",) + key):
            st.caption(_("Measuring how faithful this picture is..."))
            return
        check = explanations.heatmap_check(name, translator, src_ids, out_ids, matrix, settings)
    if short:
        st.caption(_("How faithful: removing the most-attended source words costs the output {method} of "
                     "log-probability per token; as many random words cost {random} ({verdict}).").format(
            method=html_report.drop_text(check.method), random=html_report.drop_text(check.random),
            verdict=_("more than chance") if check.beats_random else _("no better than chance")))
        return
    verdict = (_("Here attention points at words the output depends on, more than chance does.")
               if check.beats_random else
               _("Here attention is no better than random words at finding what the output depends on."))
    st.caption(_("**How faithful is this picture?** Removing the source words with the most attention (the top "
                 "10, 20 and 50 percent: {counts} tokens) lowers the output's log-probability by {method} per token "
                 "on average; removing as many random words lowers it by {random}. {verdict} The Explanations "
                 "tab compares attention with other methods.").format(
        counts=", ".join(str(n) for n in check.removed), method=html_report.drop_text(check.method),
        random=html_report.drop_text(check.random),
        verdict=verdict))


def pick_model(results: list[Decoded], key: str) -> Decoded:
    """A radio over the models shown; the chosen one's result."""
    by_name = {r.name: r for r in results}
    return by_name[st.radio(_("Model"), list(by_name), horizontal=True, key=key)]


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


def beam_tab(results: list[Decoded], settings: AppSettings) -> None:
    result = pick_model(results, "beam_model")
    name, trace = result.name, result.trace
    nodes = [n.to_json() for n in trace.beam]
    pruned = st.toggle(_("Show pruned candidates"), value=True, key="beam_pruned",
                       help=_("Hide them for a compact tree of what the beam kept"))
    shown = nodes if pruned else [n for n in nodes if n["status"] != "pruned"]
    st.caption(ngettext("{n} hypothesis ({shown} shown). Click a node to see its text and attention.",
                        "{n} hypotheses ({shown} shown). Click a node to see its text and attention.", len(nodes))
               .format(n=len(nodes), shown=len(shown)))
    picked = chart_ui(beam_tree(shown, _("{name}: beam search").format(name=ltr(name))), key=f"beam_tree_{name}")
    if picked is not None:  # a click moves the number box (its value lives under its key)
        st.session_state[f"beam_node_{name}"] = picked
    node_id = st.number_input(_("Node id"), 0, max(len(nodes) - 1, 0), key=f"beam_node_{name}")
    _show_hypothesis(result, int(node_id), settings)


def _show_hypothesis(result: Decoded, node_id: int, settings: AppSettings) -> None:
    trace = result.trace
    path = trace.path(node_id)[1:]
    text = result.translator.tgt_vocab.decode([n.token_id for n in path])
    node = trace.beam[node_id]
    st.markdown(_("**Hypothesis {id}** ({status}): {text}")
                .format(id=node_id, status=_(node.status),
                        text=ltr(md(text)) if text else _("(empty)")))
    st.caption(ngettext("log p {score:.3f}, normalised {norm:.3f}, {n} token",
                        "log p {score:.3f}, normalised {norm:.3f}, {n} tokens", node.step)
               .format(score=node.score, norm=node.norm_score, n=node.step))
    if path and path[0].attention is not None:
        matrix = np.stack([n.attention for n in path])  # (the hypothesis's tokens, source tokens)
        chart_ui(alignment_matrix(matrix, trace.source_tokens, [n.token for n in path],
                                   title=_("attention α along this hypothesis")), key="beam_node_heatmap")
        heatmap_check_ui(result.name, result.translator, trace.source_ids, [n.token_id for n in path], matrix,
                         settings, short=True)


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


def explanations_tab(results: list[Decoded], settings: AppSettings) -> None:
    offered = list(registry.applicable(any(r.trace.attention is not None for r in results)))
    layered = any(r.trace.cross_attention is not None for r in results)
    offered += [LAYERS] if layered else []
    chosen = widgets.multiselect(_("Methods"), offered,
                                 default=[m for m in (*registry.defaults(), LAYERS) if m in offered],
                                 format_func=method_label, key="explain_methods")
    if "integrated_gradients" in chosen:
        st.caption(_("Integrated gradients run 16 passes per output word, more where a word's scores do not yet add "
                     "up to its change in log-probability (to within 2%): several seconds for a long sentence."))
    if not chosen:
        st.info(_("Choose a method."))
        return
    contrast = contrast_ui(results[0])
    for column, result in zip(st.columns(len(results)), results):
        with column:
            with st.spinner(_("Explaining the translation...")):
                found = explanations.explained(result, tuple(chosen), contrast if result is results[0] else None,
                                               settings)
            explanation_view(result, found)


def contrast_ui(result: Decoded) -> Optional[tuple[int, int]]:
    """(step, token id) for "why this word and not that one" in the first model's output, or None."""
    trace = result.trace
    with st.expander(_("Why this word and not another? (contrast, {name})").format(name=ltr(result.name))):
        steps = list(range(len(trace.target_tokens)))
        step = st.selectbox(_("Output word"), [None] + steps, key="explain_step",
                            format_func=lambda i: _("none") if i is None else f"{i + 1}: {trace.target_tokens[i]}")
        if step is None or not trace.topk:
            return None
        others = [c for c in trace.topk[step] if c.id != trace.target_ids[step]]
        other = st.selectbox(_("rather than"), [None] + [c.id for c in others], key="explain_other",
                             format_func=lambda i: _("none") if i is None else next(
                                 f"{c.token} (p = {c.prob:.2f})" for c in others if c.id == i))
    return None if other is None else (step, other)


def explanation_view(result: Decoded, found) -> None:
    trace = result.trace
    shown = st.radio(_("Show"), list(found.explanations), horizontal=True, key=f"explain_show_{result.name}",
                     format_func=method_label)
    explanation = found.explanations[shown]
    source, _prefix = explanation.normalised()
    chart_ui(alignment_matrix(source, trace.source_tokens, trace.target_tokens,
                              title=_("{name}: {method}, source").format(name=ltr(result.name),
                                                                         method=method_label(shown)),
                              value_name=_("share")), key=f"explain_heat_{result.name}")
    chart_ui(shares_bar(explanation.shares(), trace.target_tokens,
                        _("{name}: source or words already written").format(name=ltr(result.name))),
             key=f"explain_shares_{result.name}")
    rows = [[method_label(m), round(float(found.explanations[m].shares()[:, 0].mean()), 3), f.deletion_area,
             f.insertion_area, f.comprehensiveness, f.sufficiency] for m, f in found.faithfulness.items()]
    rows.sort(key=lambda row: row[2])
    r = found.random
    rows.append([_("random order"), None, r.deletion_area, r.insertion_area, r.comprehensiveness, r.sufficiency])
    st.dataframe(pd.DataFrame(rows, columns=faithfulness_headers()).round(3), hide_index=True, key=f"explain_faith_{result.name}")
    panels = curve_panels(found.curves, found.random_curves, {m: method_label(m) for m in found.curves},
                          _("{name}: faithfulness curves").format(name=ltr(result.name)))
    for panel, which in zip(panels, ("deletion", "insertion")):
        chart_ui(panel, key=f"explain_curves_{which}_{result.name}")
    gap = explanation.completeness_gap
    if shown == "integrated_gradients" and gap == gap:  # not NaN
        st.caption(_("Completeness gap: {gap} (how far the scores' sum is from the change in log-probability), "
                     "with up to {steps} passes per output word.").format(gap=f"{gap:.1%}", steps=explanation.steps))


def faithfulness_headers() -> list[str]:
    """A faithfulness table's columns, as shown: method, then test_set.FIGURES in order."""
    return [_("method"), _("source share"), _("deletion (lower is better)"), _("insertion (higher is better)"),
            _("comprehensiveness"), _("sufficiency")]


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


def downloads_tab(results: list[Decoded], settings: AppSettings) -> None:
    """The files of this translation. Each is made only when its button is clicked (the button's
    data is a callable, ``widgets.deferred``): the report and the matplotlib figures take about a
    second to make, and every Ctrl+Enter on this tab would otherwise make all of them."""
    st.caption(_("Figures: each chart's download button (top right, shown on hover) saves it as PNG or SVG; "
                 "`{command}` writes the paper's figure styles as PDF, SVG or PNG.").format(command="nmt-figures"))
    text = results[0].trace.source if results else ""
    st.download_button(_("Report of this translation (one HTML file: both models' heatmaps, beam trees and steps; "
                         "opens offline)"), widgets.deferred(report, text, results, settings),
                       file_name="translation-report.html", mime="text/html", key="dl_report", on_click="ignore")
    for result in results:
        name, trace = result.name, result.trace
        if trace.attention is not None:  # the paper's Figure 3 look, drawn by matplotlib on this server
            for column, kind in zip(st.columns(len(print_figures.FORMATS)), print_figures.FORMATS):
                column.download_button(_("{name}: heatmap ({format})").format(name=ltr(name), format=kind.upper()),
                                       widgets.deferred(print_figure, result, kind, settings),
                                       file_name=f"{name}-attention.{kind}", key=f"dl_fig_{kind}_{name}",
                                       on_click="ignore")
        st.download_button(_("{name}: trace (JSON)").format(name=ltr(name)),
                           widgets.deferred(lambda trace: json.dumps(trace.to_json(), ensure_ascii=False, indent=1), trace),
                           file_name=f"{name}-trace.json", mime="application/json", key=f"dl_trace_{name}",
                           on_click="ignore")
        if trace.attention is not None:
            ends = trace.target_tokens[-1:] == ["</s>"]  # an output cut at a model's length cap has no </s> row
            st.download_button(_("{name}: alignment (Pharaoh i-j)").format(name=ltr(name)),
                               pharaoh(trace.attention, drop_eos=ends) + "\n",
                               file_name=f"{name}.align", key=f"dl_align_{name}", on_click="ignore")
