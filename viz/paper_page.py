"""Paper page: Bahdanau, Cho & Bengio (ICLR 2015), claim by claim, each beside the same
experiment with the shipped models (live, or from their cards) and a link to go further.
Sections are tabs that track which one is open: only the open section computes."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from model.checkpoint import card_length_stress
from model.evaluate import join_consecutive, run_model, stress_report
from model.search import SearchConfig

from . import common, nav, paper_model
from .alignment import alignment_heatmap
from .length_chart import length_chart, stress_chart

PAPER_URL = "https://arxiv.org/abs/1409.0473"
SECTIONS = {"model": "The model (§3, App. A)", "figure2": "Figure 2: long sentences",
            "figure3": "Figure 3: alignments", "table1": "Table 1: BLEU"}
REORDERING = [  # sentences where French changes the English word order
    "She has a white cat.",  # adjective after the noun: un chat blanc
    "We bought a big black car last week.",  # une grosse voiture noire
    "I know her.",  # object pronoun before the verb: je la connais
    "He gave it to me yesterday.",  # il me l'a donné hier
    "My brother lives in a small yellow house near the station.",
]
PAPER_SENTENCES = [  # Figure 3 (a)-(d), detokenised
    "The agreement on the European Economic Area was signed in August 1992.",
    "It should be noted that the marine environment is the least known of environments.",
    "Destruction of the equipment means that Syria can no longer produce new chemical weapons.",
    '"This will change my future with my family," the man said.',
]
TABLE_1 = pd.DataFrame([  # newstest2014 BLEU, the paper's Table 1
    ("RNNencdec-30", 13.93, 24.19), ("RNNsearch-30", 21.50, 31.44), ("RNNencdec-50", 17.82, 26.71),
    ("RNNsearch-50", 26.75, 34.16), ("RNNsearch-50* (trained longer)", 28.45, 36.15), ("Moses", 33.30, 35.63)],
    columns=["model", "all sentences", "no UNK"])
RECOMPUTE_SENTENCES = 200  # the live Figure 2 uses the first sentences of a test set, to stay quick


def page() -> st.Page:
    return st.Page(render, title="Paper", url_path="paper", icon=":material/menu_book:")


def render() -> None:
    names = common.list_checkpoints()
    if not names:
        st.error("No checkpoints found; the Paper page runs the shipped models.")
        return
    st.title("The paper, live")
    st.markdown(f"Bahdanau, Cho & Bengio, *Neural Machine Translation by Jointly Learning to Align and Translate*, "
                f"ICLR 2015 ([arXiv 1409.0473]({PAPER_URL})). Each tab states one claim in plain words, then runs the "
                "same experiment with the models shipped here, which are far smaller and trained on far less "
                "(see Table 1).")
    search, encdec = common.default_pair(names)
    views = {"model": lambda: paper_model.render(search, encdec), "figure2": lambda: figure2(search, encdec),
             "figure3": lambda: figure3(search), "table1": lambda: table1(names)}
    tabs = st.tabs(list(SECTIONS.values()), key="paper_section", on_change="rerun")
    for (slug, view), tab in zip(views.items(), tabs):
        if tab.open is not False:
            with tab:
                view()


def figure2(search: str, encdec: str) -> None:
    st.markdown("**The claim.** RNNencdec's BLEU falls as sentences get longer, because everything must pass "
                "through one fixed vector; RNNsearch's does not, because it reads the annotation it needs at each "
                "step. Below, both models translate test sentences joined k at a time (k = 1 is the test set "
                "itself), as in their cards' length stress tests.")
    cards = {name: common.card(name) for name in (search, encdec)}
    tables = {name: card_length_stress(card) for name, card in cards.items()}
    shared = [t for t in tables[search] if all(t in rows for rows in tables.values())]
    for test_set in shared:
        st.plotly_chart(stress_chart({name: rows[test_set] for name, rows in tables.items()},
                                     f"BLEU by source length, {test_set} (from the model cards)"),
                        key=f"paper_fig2_{test_set}")
    if not shared:
        st.info("The cards of the default pair hold no shared length stress test; recompute one below.")
    recompute_ui(search, encdec)


def recompute_ui(search: str, encdec: str) -> None:
    builtin = common.builtin_test_sets()
    if not builtin:
        st.caption("No test sets of the models' training corpora on this server: upload one on the Evaluate page.")
        return
    label = st.selectbox("Recompute on a test set", list(builtin), key="paper_fig2_test")
    st.page_link(nav.link("evaluate"), label=f"Evaluate both models on all of {label}",
                 query_params={"test": label}, icon=":material/arrow_forward:")
    wanted = (label, search, encdec)
    if st.button(f"Recompute on the first {RECOMPUTE_SENTENCES} sentences", key="paper_fig2_run"):
        st.session_state["paper_fig2_request"] = wanted
    if st.session_state.get("paper_fig2_request") != wanted:
        return
    test = common.load_builtin_test_set(label)
    test = type(test)(test.src[:RECOMPUTE_SENTENCES], test.ref[:RECOMPUTE_SENTENCES], test.name)
    runs = {}
    with st.spinner("Translating joined sentences with both models..."):
        for k in (1, 2, 3, 4):
            part = join_consecutive(test, k) if k > 1 else test
            runs[k] = [_run(name, part, label) for name in (search, encdec)]
    rows, summary = stress_report(test, runs)
    st.plotly_chart(length_chart(rows, f"BLEU by source length, first {len(test.src)} of {label}, k = 1..4"),
                    key="paper_fig2_live")
    st.dataframe(pd.DataFrame(summary), hide_index=True, key="paper_fig2_table")


@st.cache_resource
def _runs() -> common.ResultStore:
    return common.ResultStore(64)


def _run(name: str, test, label: str):
    """One model on one joined version of a test set, decoded once per server (its default decoding)."""
    decoding = common.card_decoding(name)
    key = (name, label, test.name, len(test.src), tuple(sorted(decoding.items())))
    found = _runs().get(key)
    if found is None:
        found = run_model(common.load_translator(name), test, SearchConfig(**decoding, trace=False),
                          slot=common.QueuedSlot())
        found.name = name
        _runs().put(key, found)
    return found


def figure3(search: str) -> None:
    st.markdown("**The claim.** The soft alignments α_ij are interpretable: mostly monotonic, with local "
                "reorderings where the languages order words differently (the paper's *European Economic Area* → "
                "*zone économique européenne*). Rows are French output pieces, columns English source pieces, "
                f"darker is more weight. Translated live by **{common.md(search)}**.")
    grid(search, REORDERING, "paper_fig3")
    st.markdown("**The paper's own four sentences.** They come from news and parliament text (WMT'14), which our "
                f"models never saw: {common.md(common.trained_on(search))}. Expect the alignments to stay "
                "sensible where the words are familiar and the translations to miss the rare words "
                "(*marine environment*, *chemical weapons*).")
    grid(search, PAPER_SENTENCES, "paper_fig3_paper")


def grid(name: str, sentences: list[str], key: str) -> None:
    settings = {**common.card_decoding(name), "trace": True}
    for row in range(0, len(sentences), 2):
        for column, sentence in zip(st.columns(2), sentences[row:row + 2]):
            with column:
                trace, _ = common.translate(name, sentence, settings)
                st.text(trace.translation)
                if trace.attention is not None:
                    st.plotly_chart(alignment_heatmap(trace.attention, trace.source_tokens, trace.target_tokens,
                                                      grayscale=True), key=f"{key}_{row}_{sentence[:20]}")
                st.page_link(nav.link("translate"), label="Open on the Translate page",
                             query_params={"src": sentence, "left": name}, icon=":material/arrow_forward:")


def table1(names: list[str]) -> None:
    st.markdown("**The claim.** With the same data and training, the attention model scores far higher than the "
                "encoder-decoder, and RNNsearch-50 matches the phrase-based Moses on sentences without unknown "
                "words. The paper's Table 1 (newstest2014, English→French, BLEU):")
    st.dataframe(TABLE_1, hide_index=True, key="paper_table1")
    rows = [{"model": name, "trained on": common.trained_on(name), "test set": test_set, "BLEU": scores.get("bleu"),
             "decoding": scores.get("decoding")}
            for name in names for test_set, scores in (common.card(name).get("test_scores") or {}).items()
            if isinstance(scores, dict)]
    st.markdown("**Our models** (sacreBLEU, cased; from their cards):")
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="paper_ours")
    st.markdown("**Why the numbers differ.** The paper trained on WMT'14 news and parliament text (348M words) "
                "with 30,000-word vocabularies and 1,000-unit GRUs for about 5 days per model on a GPU, and scored "
                "tokenised BLEU on newstest2014. Our models have 512-unit GRUs (about 11M parameters), 6,000 "
                "subword pieces, and trained for one to two hours on two CPU cores on short everyday sentences "
                "(Tatoeba) or image captions (Multi30k); their test sets are from those corpora, so their BLEU "
                "is higher in absolute terms but not comparable with the paper's. What carries over is the "
                "comparison: each pair was trained the same way, and the gap between RNNsearch and RNNencdec, "
                "largest on long inputs, is the paper's result.")
    st.page_link(nav.link("models"), label="Every model's card", icon=":material/arrow_forward:")
    builtin = common.builtin_test_sets()
    if builtin:
        first = next(iter(builtin))
        st.page_link(nav.link("evaluate"), label=f"Score the default pair yourself on {first}",
                     query_params={"test": first}, icon=":material/arrow_forward:")
