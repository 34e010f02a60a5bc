"""The Translate page's tabs: their labels, which rerun alone, the "how to read this" of each, and
the one that runs: only the open tab computes (``render``)."""
from __future__ import annotations


import streamlit as st

from model.decoding.search import SearchConfig
from viz.pages.parts import widgets
from viz.i18n import N_, _
from viz.pages.parts.url_state import TABS
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.translate.alignment_tab import alignment_tab
from viz.pages.translate.beam_tab import beam_tab
from viz.pages.translate.downloads_tab import downloads_tab
from viz.pages.translate.explanations_tab import explanations_tab
from viz.pages.translate.steps_tab import step_tab
from viz.pages.translate.teacher_forcing_tab import teacher_forcing_tab
from viz.pages.translate.what_if_tab import what_if_tab


# The tabs' labels in English: links and other code set the tabs' state ("tab") to one of these;
# the tabs show them translated (widgets.tabs_ui moves a label of any language to this one's).
LABELS = dict(zip(TABS, [N_("Alignment"), N_("Step by step"), N_("Beam tree"), N_("What if"), N_("Explanations"),
                         N_("Teacher forcing"), N_("Downloads")]))


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

# Added to a tab's "how to read this" when a shown model can be taken apart layer by layer
# (``Decodable.supports_anatomy``: this project's Transformers). Shown through _().
LAYERWISE = {
    "explanations": N_(
        "Three more methods follow each word through every layer of this project's Transformers. **ALTI+** "
        "(Ferrando et al. 2022) writes each attention block's output y_i as a sum of one vector per input word, "
        "T_i(x_j) = Σ_h w^h_ij W^O_h(W^V_h LN(x_j) + b^V_h), and scores word j by how close its vector is to the "
        "output, c_ij = max(0, ‖y_i‖₁ − ‖y_i − T_i(x_j)‖₁), normalised over j; the blocks' scores are composed "
        "through the layers, from the source words to the output word. **Value zeroing** (Mohebbi et al. 2023) "
        "sets word j's value vector to zero, recomputes the layer and scores j by how far its output moves "
        "(cosine distance), composed the same way. **Attention rollout** (Abnar & Zuidema 2020) multiplies the "
        "layers' attention, each the mean of its heads with half of every row kept on the word itself. How "
        "faithful each is: rollout reads the weights α alone, as attention does; ALTI+ and value zeroing also "
        "read what each word's value vector adds, as norm-weighted attention does. None is a guarantee: each "
        "has its row in the faithfulness table and its curves below, against the random order."),
}


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
            how_to_read(slug, layered=any(r.translator.model.supports_anatomy for r in results))
            st.fragment(view)() if slug in ALONE else view()
    return opened


def how_to_read(slug: str, layered: bool = False) -> None:
    """The tab's "how to read this", with what its layer-wise views add when ``layered`` (a shown
    model can be taken apart layer by layer)."""
    visited = st.session_state.setdefault("tabs_visited", set())
    with st.expander(_("How to read this"), expanded=slug not in visited, icon=":material/help:"):
        st.markdown(_(HOW_TO_READ[slug]))
        if layered and slug in LAYERWISE:
            st.markdown(_(LAYERWISE[slug]))
    visited.add(slug)
