"""Paper page: Bahdanau, Cho & Bengio (ICLR 2015), claim by claim, each beside the same
experiment with the offered models of one language pair (live, or from their cards) and a
link to go further. Sections are tabs that track which one is open: only the open section
computes."""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from model.corpus.test_sets import EvalSet, join_consecutive
from model.decoding.cross_attention import default_choice
from model.scoring.attention_alignment import best_head, head_grid
from model.scoring.evaluation import STRESS_K
from viz.figures.heatmap import alignment_matrix
from viz.figures.length_chart import length_lines, stress_lines
from viz.pages.parts import nav, paper_equations, widgets
from viz.pages.parts.faithfulness_ui import attention_check_ui
from viz.pages.parts.examples import examples, reordering
from viz.i18n import N_, _, ltr, ngettext
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.head_grid import grid_figure, reading_text
from viz.pages.parts.head_importance_ui import heads_matter_ui
from viz.pages.parts.replay import replay_ui
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import load_builtin_set
from viz.serving import evaluations, offered_models
from viz.serving.builtin_sets import builtin_sets
from viz.serving.offered_models import ModelInfo
from viz.serving.settings import AppSettings

PAPER_URL = "https://arxiv.org/abs/1409.0473"
PAPER_TITLE = "Neural Machine Translation by Jointly Learning to Align and Translate"  # a citation: not translated
SECTIONS = {"model": N_("The model (§3, App. A)"), "figure2": N_("Figure 2: long sentences"),
            "figure3": N_("Figure 3: alignments"), "table1": N_("Table 1: BLEU"),
            "next": N_("What came next: the Transformer")}
TRANSFORMER_URL = "https://arxiv.org/abs/1706.03762"
PAPER_SENTENCES = {  # Figure 3 (a)-(d), detokenised: the English sources, and the French the figure shows
    "en": ["The agreement on the European Economic Area was signed in August 1992.",
           "It should be noted that the marine environment is the least known of environments.",
           "Destruction of the equipment means that Syria can no longer produce new chemical weapons.",
           '"This will change my future with my family," the man said.'],
    "fr": ["L'accord sur la zone économique européenne a été signé en août 1992.",
           "Il convient de noter que l'environnement marin est le moins connu de l'environnement.",
           "La destruction de l'équipement signifie que la Syrie ne peut plus produire de nouvelles armes chimiques.",
           '" Cela va changer mon avenir avec ma famille ", a dit l\'homme.'],
}
TRAINED_LONGER = N_("RNNsearch-50* (trained longer)")
TABLE_1 = pd.DataFrame([  # newstest2014 BLEU, the paper's Table 1
    ("RNNencdec-30", 13.93, 24.19), ("RNNsearch-30", 21.50, 31.44), ("RNNencdec-50", 17.82, 26.71),
    ("RNNsearch-50", 26.75, 34.16), (TRAINED_LONGER, 28.45, 36.15), ("Moses", 33.30, 35.63)],
    columns=["model", "all sentences", "no UNK"])
RECOMPUTE_SENTENCES = 200  # the live Figure 2 uses the first sentences of a test set, to stay quick


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Paper"), url_path="paper", icon=":material/menu_book:")


def render(settings: AppSettings) -> None:
    models = offered_models.offered(settings)
    if not models:
        st.error(_("No checkpoints found; the Paper page runs the shipped models."))
        return
    st.title(_("The paper, live"))
    st.markdown(_("Bahdanau, Cho & Bengio, *{title}*, ICLR 2015 ([arXiv 1409.0473]({url})). Each tab states one "
                  "claim in plain words, then runs the same experiment with the models shipped here, which are far "
                  "smaller and trained on far less (see Table 1).").format(title=ltr(PAPER_TITLE), url=PAPER_URL))
    pair = widgets.direction_ui([widgets.direction_code(d) for d in widgets.directions(models)], key="paper_direction")
    mine = [m for m in models if widgets.direction_code(m.direction) == pair]
    search, encdec = offered_models.default_pair(mine)
    src_lang = pair.split("-")[0]
    st.caption(_("Language pair: {pair} · RNNsearch: {search} · RNNencdec: {encdec} (change the pair in the "
                 "sidebar).").format(pair=widgets.direction_label(tuple(pair.split("-"))), search=ltr(md(search)),
                                     encdec=ltr(md(encdec))))
    sentence = (reordering(src_lang) or [text for _, text in examples(src_lang)] or [""])[0]
    attention_models = [search] + [m.name for m in mine if m.has_attention and m.name != search]
    views = {"model": lambda: paper_equations.render(search, encdec, sentence, settings, attention_models),
             "figure2": lambda: figure2(search, encdec, pair, settings),
             "figure3": lambda: figure3(search, encdec, src_lang, settings), "table1": lambda: table1(models, settings),
             "next": lambda: what_came_next(search, encdec, mine, sentence, settings)}
    tabs = widgets.tabs_ui(SECTIONS, key="paper_section")
    for (slug, view), tab in zip(views.items(), tabs):
        if tab.open is not False:
            with tab:
                view()


def figure2(search: str, encdec: str, pair: str, settings: AppSettings) -> None:
    st.markdown(_("**The claim.** RNNencdec's BLEU falls as sentences get longer, because everything must pass "
                  "through one fixed vector; RNNsearch's does not, because it reads the annotation it needs at each "
                  "step. Below, both models translate test sentences joined k at a time (k = 1 is the test set "
                  "itself), as in their cards' length stress tests."))
    cards = {name: _card(name, settings) for name in (search, encdec)}
    tables = {name: card.length_stress if card else {} for name, card in cards.items()}
    shared = [t for t in tables[search] if all(t in rows for rows in tables.values())]
    for test_set in shared:
        chart_ui(stress_lines({name: rows[test_set] for name, rows in tables.items()},
                              _("BLEU by source length, {test_set} (from the model cards)").format(test_set=ltr(test_set))),
                 key=f"paper_fig2_{test_set}")
    if not shared:
        st.info(_("The cards of this pair hold no shared length stress test; recompute one below."))
    recompute_ui(search, encdec, tuple(pair.split("-")), settings)
    st.markdown(_("**Inside the fixed vector.** The training sentences nearest to RNNencdec's fixed vector of a "
                  "sentence share fewer of its words, and rarely its ending, the longer the sentence is."))
    st.page_link(nav.link("space"), label=_("See where each model puts a sentence among its training sentences"),
                 icon=":material/scatter_plot:")


def _card(name: str, settings: AppSettings):
    model = offered_models.info(name, settings)
    return model.card if model else None


def recompute_ui(search: str, encdec: str, direction: tuple[str, str], settings: AppSettings) -> None:
    builtin = builtin_sets(settings, direction)
    if not builtin:
        st.caption(_("No test sets of the models' training corpora on this server: upload one on the Evaluate "
                     "page."))
        return
    label = st.selectbox(_("Recompute on a test set"), list(builtin), key="paper_fig2_test")
    st.page_link(nav.link("evaluate"), label=_("Evaluate both models on all of {test}").format(test=ltr(label)),
                 query_params={"test": label, **widgets.app_params()}, icon=":material/arrow_forward:")
    wanted = (label, search, encdec)
    if st.button(ngettext("Recompute on the first {n} sentence", "Recompute on the first {n} sentences",
                          RECOMPUTE_SENTENCES).format(n=RECOMPUTE_SENTENCES), key="paper_fig2_run"):
        st.session_state["paper_fig2_request"] = wanted
    if st.session_state.get("paper_fig2_request") != wanted:
        return
    full = load_builtin_set(builtin[label])
    test = EvalSet(full.src[:RECOMPUTE_SENTENCES], full.ref[:RECOMPUTE_SENTENCES], full.name)
    runs = {}
    with st.spinner(_("Translating joined sentences with both models...")):
        for k in STRESS_K:
            part = join_consecutive(test, k) if k > 1 else test
            runs[k] = [evaluations.paper_run(name, part, label, settings) for name in (search, encdec)]
    rows, summary = evaluations.stress_rows(test, runs)
    title = _("BLEU by source length, first {n} of {test}, k = {ks}").format(
        n=len(test.src), test=ltr(label), ks=", ".join(map(str, STRESS_K)))
    chart_ui(length_lines(rows, title), key="paper_fig2_live")
    headers = {"model": _("model"), "items": _("items"), "length_ratio": _("length_ratio")}
    st.dataframe(pd.DataFrame(summary).rename(columns=headers), hide_index=True, key="paper_fig2_table")


def figure3(search: str, encdec: str, src_lang: str, settings: AppSettings) -> None:
    st.markdown(_("**The claim.** The soft alignments α_ij are interpretable: mostly monotonic, with local "
                  "reorderings where the languages order words differently (the paper's *European Economic Area* → "
                  "*zone économique européenne*). Rows are output pieces, columns source pieces, "
                  "darker is more weight. Translated live by **{model}**.").format(model=ltr(md(search))))
    grid(search, reordering(src_lang) or [text for _, text in examples(src_lang)][:4], "paper_fig3", settings)
    if src_lang in PAPER_SENTENCES:
        st.markdown(_("**The paper's own four sentences.** They come from news and parliament text (WMT'14), which "
                      "our models never saw: {trained_on}. Expect the alignments to stay sensible where the words are "
                      "familiar and the translations to miss the rare words (*marine environment*, *chemical "
                      "weapons*).").format(trained_on=ltr(md(offered_models.trained_on(search, settings)))))
        grid(search, PAPER_SENTENCES[src_lang], "paper_fig3_paper", settings)
    st.markdown(_("**Watch it learn.** The same probe sentences, decoded as training went on: update 0 is the "
                  "untrained model, whose attention is spread evenly (the paper initialises the alignment model so "
                  "that it starts uniform); the alignment sharpens as validation BLEU rises. RNNencdec, beside it, "
                  "has no attention to learn."))
    replay_ui([card for card in (_card(name, settings) for name in (search, encdec)) if card], key="paper_replay")
    measured_alignment(search, encdec, settings)


def measured_alignment(search: str, encdec: str, settings: AppSettings) -> None:
    """How well the attention aligns, measured against human alignments (the cards' ``alignment``,
    written by ``python -m model.align --card``)."""
    st.markdown(_("**How well does it align, measured?** Forced to output a human translation, the words the "
                  "attention picks can be scored against human word alignments by Alignment Error Rate (AER, lower "
                  "is better). Beside it: gradient × input saliency (RNNencdec has that too), the statistical "
                  "aligner eflomal trained on the same text, and a diagonal that links words by position alone."))
    cards = {name: _card(name, settings) for name in (search, encdec)}
    rows, baseline = [], _("(baseline)")
    for name, card in cards.items():
        for gold, result in (card.alignment.items() if card else ()):
            rows += [{"gold set": gold, "source": f"{r.model or baseline} · {r.method}", "links": r.extraction,
                      "AER": r.aer, "precision": r.precision, "recall": r.recall, "sentences": r.sentences}
                     for r in result.rows if r.model == name or (r.model is None and name == search)]
    if not rows:
        st.caption(_("These models' cards hold no alignment measurement; run one on the Alignment page."))
    else:
        table = pd.DataFrame(rows).drop_duplicates(subset=["gold set", "source", "links"])
        headers = {"gold set": _("gold set"), "source": _("source"), "links": _("links"),
                   "precision": _("precision"), "recall": _("recall"), "sentences": _("sentences")}
        st.dataframe(table.sort_values(["gold set", "AER"]).rename(columns=headers), hide_index=True,
                     key="paper_fig3_aer")
        st.markdown(_("The gold sets are parliament text (Canadian Hansards, Europarl), far from the everyday "
                      "sentences and captions these models learnt from: there the attention aligns little better "
                      "than the diagonal, while a statistical aligner trained on the same text does several times "
                      "better. Attention aligns text like its training data; it is the paper's models, trained on "
                      "parliament and news text, whose alignments Figure 3 shows."))
    st.page_link(nav.link("alignment"), label=_("Measure it yourself, sentence by sentence"),
                 icon=":material/arrow_forward:")
    st.markdown(_("**Is attention an explanation?** Aligning well is not the same as showing what the model used "
                  "(Jain & Wallace 2019; Wiegreffe & Pinter 2019). The Translate page's Explanations tab sets "
                  "attention beside norm-weighted attention, gradient × input, integrated gradients and occlusion, "
                  "for both models, and measures how faithful each one is: remove the source words it ranks first "
                  "and see whether the output's probability falls faster than in a random order. The Evaluate page "
                  "measures the same over a whole test set."))
    st.page_link(nav.link("translate"), label=_("Compare the explanations of a translation"),
                 query_params={"tab": "explanations", **widgets.app_params()}, icon=":material/arrow_forward:")


def what_came_next(search: str, encdec: str, mine: list[ModelInfo], sentence: str, settings: AppSettings) -> None:
    """The Transformer (Vaswani et al. 2017) trained the same way: the same sentence through it
    and RNNsearch, the length chart of all three models, and its layer x head AER grid, each with
    sentences made from the figures shown."""
    st.markdown(_("**What came next.** Two years later, Vaswani et al. ([arXiv 1706.03762]({url})) dropped the "
                  "recurrence and kept the attention: in the Transformer every layer attends, the decoder's "
                  "cross-attention is RNNsearch's soft search split into several heads, and there is one in every "
                  "decoder layer. The Transformer offered here was trained by the same code on the same data, with "
                  "the same recipe and number of updates as the two RNNs (its card says where it differs).")
                .format(url=TRANSFORMER_URL))
    first = next((m for m in mine if m.name == search), None)
    pair = first.card.pair if first and first.card else None
    transformers = [m for m in mine if m.has_heads]
    transformer = next((m for m in transformers if m.card and pair and m.card.pair == pair),
                       transformers[0] if transformers else None)
    if transformer is None:
        st.info(_("No Transformer of this language pair is offered on this server. Train one with the command "
                  "below and start the app with its folder among the checkpoints."))
        st.code("python -m model.train --preset transformer", language="bash")
        return
    name = transformer.name
    st.subheader(_("One sentence, two kinds of attention"))
    for column, model in zip(st.columns(2), (search, name)):
        with column:
            decoded = paper_equations.decode(model, sentence, settings)
            trace = decoded.trace
            st.markdown(f"**{md(model)}**")
            st.text(trace.translation)
            if trace.attention is not None:
                chart_ui(alignment_matrix(trace.attention, trace.source_tokens, trace.target_tokens, grayscale=True),
                         key=f"paper_next_{model}")
                attention_check_ui(model, decoded.translator, trace, settings, short=True)
    layer = default_choice(paper_equations.decode(name, sentence, settings).trace).layer + 1
    st.caption(_("Left, RNNsearch's α; right, the Transformer's cross-attention of layer {layer}, averaged over its "
                 "heads (the layer its card names). The Translate page shows every layer and head of it.")
               .format(layer=layer))
    st.page_link(nav.link("translate"), label=_("Every layer and head on the Translate page"),
                 query_params={**_translate_link(name, sentence, settings), **widgets.app_params()},
                 icon=":material/arrow_forward:")
    length_three(search, encdec, name, settings)
    head_grid_from_card(search, name, settings)
    card = _card(name, settings)
    if card is not None and card.head_importance is not None:
        heads_matter_ui(card.head_importance, name, "paper_next")


def length_three(search: str, encdec: str, transformer: str, settings: AppSettings) -> None:
    """Figure 2 with the Transformer: the three models' length stress tests from their cards."""
    st.subheader(_("Long sentences, three models"))
    tables = {n: (_card(n, settings).length_stress if _card(n, settings) else {}) for n in (search, encdec, transformer)}
    shared = [t for t in tables[search] if all(t in rows for rows in tables.values())]
    if not shared:
        st.info(_("The three models' cards share no length stress test."))
        return
    test_set = shared[0]
    rows = {n: table[test_set] for n, table in tables.items()}
    chart_ui(stress_lines(rows, _("BLEU by source length, {test_set} (from the model cards)").format(
        test_set=ltr(test_set))), key="paper_next_lengths")
    last_k = min(max(r.k for r in model_rows) for model_rows in rows.values())
    kept = {n: next(r.bleu for r in model_rows if r.k == last_k) / max(next(r.bleu for r in model_rows if r.k == 1), 1e-9)
            for n, model_rows in rows.items()}
    st.caption(_("Joining {k} test sentences at a time, {search} keeps {a:.0%} of its BLEU on single sentences, "
                 "{encdec} {b:.0%} and {transformer} {c:.0%}. Above 100%, joined sentences score higher than single "
                 "ones (BLEU's brevity penalty and n-gram matches over a longer text); a fall marks a model that "
                 "loses long inputs.").format(k=last_k, search=ltr(search), encdec=ltr(encdec),
                                              transformer=ltr(transformer), a=kept[search], b=kept[encdec],
                                              c=kept[transformer]))


def head_grid_from_card(search: str, transformer: str, settings: AppSettings) -> None:
    """The Transformer's layer x head AER grid on each gold set its card records, beside RNNsearch's."""
    st.subheader(_("Which layer and head align?"))
    card, search_card = _card(transformer, settings), _card(search, settings)
    results = card.alignment if card else {}
    if not results:
        st.info(_("The Transformer's card holds no alignment measurement; the Alignment page measures one."))
        return
    for gold, result in results.items():
        how = next((r.extraction for r in result.rows if r.method == "heads"), None)
        if how is None:
            continue
        chart_ui(grid_figure(head_grid(result.rows, transformer, how, False),
                             _("{gold}: AER by layer and head").format(gold=ltr(gold))), key=f"paper_next_grid_{gold}")
        best = best_head(result.rows, transformer, how)
        theirs = [r.aer for r in (search_card.alignment.get(gold).rows if search_card and gold in search_card.alignment
                                  else ()) if r.model == search and r.method == "attention" and r.extraction == how]
        default = [r.aer for r in result.rows if r.model == transformer and r.method == "attention"
                   and r.extraction == how]
        st.caption(_("On {gold}, the best-aligning reading is {which} (AER {best:.3f}); the layer the Transformer's "
                     "views show scores {default}, RNNsearch's attention {search}. Darker cells align worse; the "
                     "Alignment page shows the shifted reading too.").format(
            gold=ltr(gold), which=reading_text(best), best=best.aer, default=f"{default[0]:.3f}" if default else "–",
            search=f"{theirs[0]:.3f}" if theirs else "–"))


def grid(name: str, sentences: list[str], key: str, settings: AppSettings) -> None:
    for row in range(0, len(sentences), 2):
        for column, sentence in zip(st.columns(2), sentences[row:row + 2]):
            with column:
                decoded = paper_equations.decode(name, sentence, settings)
                trace = decoded.trace
                st.text(trace.translation)
                if trace.attention is not None:
                    chart_ui(alignment_matrix(trace.attention, trace.source_tokens, trace.target_tokens,  # no
                                               grayscale=True), key=f"{key}_{row}_{sentence[:20]}")  # plotly: fast
                    attention_check_ui(name, decoded.translator, trace, settings, short=True)
                st.page_link(nav.link("translate"), label=_("Open on the Translate page"),
                             query_params={**_translate_link(name, sentence, settings), **widgets.app_params()},
                             icon=":material/arrow_forward:")


def _translate_link(name: str, sentence: str, settings: AppSettings) -> dict:
    model = offered_models.info(name, settings)
    pair = widgets.direction_code(model.direction) if model else ""
    return {"src": sentence, "left": name, **({"pair": pair} if pair and model.direction != offered_models.DEFAULT_DIRECTION
                                              else {})}


def table1(models: list[ModelInfo], settings: AppSettings) -> None:
    st.markdown(_("**The claim.** With the same data and training, the attention model scores far higher than the "
                  "encoder-decoder, and RNNsearch-50 matches the phrase-based Moses on sentences without unknown "
                  "words. The paper's Table 1 (newstest2014, English→French, BLEU):"))
    paper_table = TABLE_1.assign(model=TABLE_1["model"].replace({TRAINED_LONGER: _(TRAINED_LONGER)}))
    st.dataframe(paper_table.rename(columns={"model": _("model"), "all sentences": _("all sentences"),
                                             "no UNK": _("no UNK")}), hide_index=True, key="paper_table1")
    rows = [{"model": m.name, "pair": widgets.direction_label(m.direction), "trained on": m.trained_on,
             "test set": test_set, "BLEU": scores.bleu, "decoding": scores.decoding}
            for m in models if m.card for test_set, scores in m.card.test_scores.items()]
    st.markdown(_("**Our models** (sacreBLEU, cased; from their cards):"))
    if rows:
        headers = {"model": _("model"), "pair": _("pair"), "trained on": _("trained on"), "test set": _("test set"),
                   "decoding": _("decoding")}
        st.dataframe(pd.DataFrame(rows).rename(columns=headers), hide_index=True, key="paper_ours")
    st.markdown(_("**Why the numbers differ.** The paper trained on WMT'14 news and parliament text (348M words) "
                  "with 30,000-word vocabularies and 1,000-unit GRUs for about 5 days per model on a GPU, and scored "
                  "tokenised BLEU on newstest2014. Our models have 512-unit GRUs (about 11M parameters), 6,000 "
                  "subword pieces, and trained for a few hours on two CPU cores on short everyday sentences "
                  "(Tatoeba) or image captions (Multi30k); their test sets are from those corpora, so their BLEU "
                  "is higher in absolute terms but not comparable with the paper's. What carries over is the "
                  "comparison: each pair was trained the same way, and the gap between RNNsearch and RNNencdec, "
                  "largest on long inputs, is the paper's result."))
    st.page_link(nav.link("models"), label=_("Every model's card"), icon=":material/arrow_forward:")
    builtin = builtin_sets(settings, offered_models.DEFAULT_DIRECTION) or builtin_sets(settings)
    if builtin:
        first = next(iter(builtin))
        st.page_link(nav.link("evaluate"), label=_("Score a pair yourself on {test}").format(test=ltr(first)),
                     query_params={"test": first, **widgets.app_params()}, icon=":material/arrow_forward:")
