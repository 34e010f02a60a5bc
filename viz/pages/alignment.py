"""Alignment page: how well does each model's attention align words, measured against human
word alignments, beside saliency, a statistical aligner and the diagonal (model/scoring/attention_alignment.py)."""
from __future__ import annotations

from functools import partial
from typing import Callable, Optional

import numpy as np
import pandas as pd
import streamlit as st

from model.core.errors import DataError, UserError
from model.decoding.translator import MAX_SOURCE_TOKENS
from model.scoring.attention_alignment import DEFAULT_METHODS, METHODS, PAIRED, Row, best_head, head_grid, row_aer
from model.scoring.statistical_aligner import AlignerText
from model.scoring.forced_matrices import Unscored, WordMatrices
from model.scoring.word_alignment import (
    BOTH_DIRECTIONS,
    DEFAULT_EXTRACTION,
    EXTRACTIONS,
    GoldSet,
    both_directions,
    diagonal_matrix,
    extract,
)
from viz.figures.heatmap import answer_key_matrix
from viz.pages.parts import widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.head_grid import grid_figure, reading_text
from viz.pages.parts.head_importance_ui import heads_matter_ui
from viz.pages.parts.lost_uploads import lost_uploads_ui
from viz import html_report
from viz.i18n import N_, _, error_text, ltr, ngettext
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import queue_notice
from viz.serving import alignments, hosting, offered_models, statistical_overlay
from viz.serving.alignments import (
    ALIGN_LANGS,
    BASELINES,
    Measured,
    Recorded,
    builtin_gold,
    recorded_gold_sets,
    recorded_results,
)
from viz.serving.settings import AppSettings

# Extraction and method names are values (model.align's options, the cards' rows): shown as they
# are, beside their descriptions in the reader's language.
EXTRACTION_HELP = {
    "target": N_("each French word to its highest-weighted English word (the paper's reading of Figure 3)"),
    "source": N_("each English word to its highest-weighted French word"),
    "intersect": N_("links both of the above agree on"),
    "union": N_("links either of the above picks"),
    "threshold": N_("every cell with weight 0.3 or more"),
}
METHOD_HELP = {
    "attention": N_("the model's α, forced to output the gold French"),
    "saliency": N_("gradient × input of the same output (RNNencdec too)"),
    "eflomal": N_("a statistical aligner trained on the models' training text plus these sentences"),
    "diagonal": N_("each word linked by its relative position: knows no words"),
    "attention_norm": N_("‖α_ij h_j‖: what each source word actually adds to the context"),
    "gradient_x_input": N_("gradient × input, over the source words and the words already written"),
    "integrated_gradients": N_("integrated gradients from a blank input (slow: 32 passes per word)"),
    "occlusion": N_("the log-probability lost when the source word is blanked out"),
    "alti_plus": N_("each source word's contribution followed through every layer (ALTI+; this project's Transformers)"),
    "value_zeroing": N_("how much each layer's output moves when a word's value vector is zeroed (this project's Transformers)"),
    "rollout": N_("attention composed through every layer, half of each row on the residual (this project's Transformers)"),
    "heads": N_("a Transformer's cross-attention, every layer and head, in a grid"),
}
# Where the gold set comes from: the radio's values (kept in session state), shown through _().
BUILT_IN_GOLD, UPLOAD_GOLD = N_("Built-in gold set"), N_("Upload three files")


def described(descriptions: dict[str, str]) -> Callable[[str], str]:
    """An option's label by its name: the name (a value, left to right) and its description, in
    the reader's language now (a format_func may be called outside this script run: AppTest
    does); a name without a description (a method registered later) reads as itself."""
    return lambda name: f"{ltr(name)}: {_(descriptions[name])}" if name in descriptions else ltr(name)


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Alignment"), url_path="alignment", icon=":material/grid_on:")


def render(settings: AppSettings) -> None:
    st.title(_("How well does attention align?"))
    st.caption(_("The paper's Figure 3 shows attention lining up with a translation's words. Here it is measured: "
                 "each model is forced to output a human-aligned French translation, and the words its attention "
                 "picks are scored against the human links by Alignment Error Rate (AER, lower is better; Och & Ney "
                 "2003), beside gradient × input saliency, the statistical aligner eflomal and a plain diagonal."))
    models = [m for m in offered_models.offered(settings) if set(m.direction) == set(ALIGN_LANGS)]
    if not models:
        st.error(hosting.no_checkpoints_text(settings, _("Alignment needs an English-French model.")))
        return
    picked = gold_ui(settings)
    if picked is None:
        recorded_ui(models)
        return
    gold, digest = picked
    chosen = models_ui(models)
    methods = widgets.multiselect(_("Sources"), METHODS, default=[m for m in DEFAULT_METHODS if m != "eflomal" or statistical_overlay.available()],
                             format_func=described(METHOD_HELP), key="align_methods")
    if not chosen and not set(methods) & {"eflomal", "diagonal"}:
        st.info(_("Choose a model or a baseline."))
        return
    how = st.selectbox(_("Links from a matrix"), EXTRACTIONS, format_func=described(EXTRACTION_HELP),
                       key="align_extraction")
    infos = [next(m for m in models if m.name == name) for name in chosen]
    recorded = recorded_results(gold, digest, infos, tuple(methods), how) if digest is not None else Recorded(
        (), (), tuple(chosen), tuple(m for m in methods if m in BASELINES))  # only a built-in set has a digest
    wanted = (gold, tuple(chosen), tuple(methods))
    level = measure_ui(gold, recorded, wanted)
    measured = None
    if level is not None:  # "all", or "missing": only what the cards do not record
        names, wanted_methods = (tuple(chosen), tuple(methods)) if level == "all" else (
            recorded.missing_models, tuple(m for m in methods if m not in BASELINES or m in recorded.missing_baselines))
        try:
            with st.spinner(_("Forcing each model through the gold translations...")):
                measured = alignments.measure(gold, names, wanted_methods, settings, on_queued=queue_notice)
        except UserError as exc:
            st.error(hosting.error_text(exc, settings, _("The measurement could not run on this server.")))
            return
    if measured is None and not recorded.rows:
        return
    results_ui(gold, None if level == "all" else recorded, measured, how, settings,
               {m.name: m.card for m in infos if m.card is not None})
    if level == "all":
        sentence_ui(gold, measured, shown_rows(measured.rows, how), settings)


def measure_ui(gold: GoldSet, recorded: "Recorded", wanted: tuple) -> Optional[str]:
    """The Measure buttons; what is asked for: "all" (every chosen source, with the matrices the
    sentence-by-sentence view draws), "missing" (what the cards do not record) or None."""
    request = st.session_state.get("align_request")
    level = request[1] if request and request[0] == wanted else None
    if not recorded.rows:
        n = len(gold.sentences)
        text, asks = ngettext("{n} sentence. Press Measure to score the chosen sources.",
                              "{n} sentences. Press Measure to score the chosen sources.", n).format(n=n), "all"
    elif recorded.complete:
        text, asks = _("From the models' cards. Press Measure to run the models again and draw each sentence."), "all"
    else:
        text, asks = _("From the models' cards; not recorded there: {names}. Press Measure to score them.").format(
            names=", ".join(ltr(name) for name in [*recorded.missing_models, *recorded.missing_baselines])), "missing"
    if level is None or (level == "missing" and asks == "all"):
        if st.button(_("Measure"), type="primary", key="align_run"):
            level = asks
        else:
            st.caption(text)
    if level == "missing" and st.button(_("Measure everything, sentence by sentence"), key="align_all"):
        level = "all"
    if level is not None:
        st.session_state["align_request"] = (wanted, level)
    return level




def gold_ui(settings: AppSettings) -> Optional[tuple[GoldSet, Optional[str]]]:
    """The gold set picked or uploaded, with its ``gold_digest`` for a built-in set (None for an
    upload: no card records it); None while there is none."""
    builtin = builtin_gold(settings)
    kinds = ([BUILT_IN_GOLD] if builtin else []) + [UPLOAD_GOLD]  # values: English, shown translated
    kind = st.radio(_("Gold alignments"), kinds, horizontal=True, format_func={k: _(k) for k in kinds}.get,
                    key="align_source")
    try:
        if kind == BUILT_IN_GOLD:
            name = st.selectbox(_("Gold set"), list(builtin), key="align_builtin")
            return alignments.read_builtin_gold(*builtin[name])
        left, middle, right = st.columns(3)
        src = left.file_uploader(_("English, tokenised (words separated by spaces), one sentence per line"),
                                 key="align_src")
        tgt = middle.file_uploader(_("French, tokenised, line-aligned"), key="align_tgt")
        links = right.file_uploader(_("Links: .wa (SENT EN FR S|P, from 1) or Pharaoh (i-j, i?j, from 0)"),
                                    key="align_links")
        lost_uploads_ui("gold", [f.name for f in (src, tgt, links) if f is not None] or None)
        if src is None or tgt is None or links is None:
            st.info(_("Upload the three files, or pick a built-in gold set.") if builtin else
                    _("Upload the three files. Start the app with `--align-dir DIR` to offer the gold sets of "
                      "a folder (NAME.en, NAME.fr, NAME.wa) without uploading."))
            return None
        return alignments.read_uploaded_gold((src.getvalue(), tgt.getvalue(), links.getvalue()), (src.name, tgt.name, links.name)), None
    except DataError as exc:  # names the file and line; uploads are written under their own names
        st.error(md(error_text(exc)))
        return None


def models_ui(models: list[offered_models.ModelInfo]) -> list[str]:
    names = [m.name for m in models]
    defaults = [n for n in dict.fromkeys(offered_models.default_pair(models)) if n in names]
    labels = {m.name: m.label for m in models}
    return widgets.multiselect(_("Models"), names, default=defaults, format_func=labels.get, key="align_models")


def shown_rows(rows, how: str) -> list:
    """The rows of extraction ``how``, the two directions' combined rows and the baselines."""
    return [r for r in rows if r.method != "heads" and
            (r.model is None or r.extraction == how or r.extraction in BOTH_DIRECTIONS)]


def results_ui(gold: GoldSet, recorded: Optional[Recorded], measured: Optional[Measured], how: str,
               settings: AppSettings, cards: Optional[dict] = None) -> None:
    """The AER table: rows the cards record (``recorded``) and rows measured now, models first,
    then the two directions combined, then the baselines; ``cards`` {model: Card} of the models chosen."""
    table = card_rows(recorded.rows if recorded else ())
    table += [(r.model, r.method, r.extraction, r.counts.aer, r.counts.precision, r.counts.recall, r.sentences,
               _("measured now")) for r in (shown_rows(measured.rows, how) if measured else ())]
    scores_table_ui(table, with_source=bool(recorded), key="align_table")
    heads_ui([*(recorded.rows if recorded else ()), *(measured.rows if measured else ())], how, cards=cards)
    if recorded and recorded.rows:
        n = len(gold.sentences)
        with st.expander(ngettext("Rows from a card: measured on this {n} sentence before the models were shipped",
                                  "Rows from a card: measured on these {n} sentences before the models were shipped",
                                  n).format(n=n)):
            for command in recorded.provenance:
                st.code(command, language="bash", wrap_lines=True)
    if measured is not None and measured.eflomal_corpus:  # it names corpus paths: not on a public server
        st.caption(_("eflomal learnt from the models' training text plus these sentences.")
                   if hosting.production(settings)
                   else _("eflomal learnt from {corpus}.").format(corpus=aligner_text(measured.eflomal_corpus)))
    for u in (measured.unscored if measured else ()):
        st.warning(_("Not scored: {model}, sentence {n}: {reason}").format(model=ltr(md(u.model)), n=u.sentence,
                                                                          reason=unscored_text(u)))


def card_rows(rows) -> list[tuple]:
    """``scores_table_ui``'s rows for the scores a card records (its layer x head rows aside)."""
    return [(r.model, r.method, r.extraction, r.aer, r.precision, r.recall, r.sentences, _("card"))
            for r in rows if r.method != "heads"]


def scores_table_ui(table: list[tuple], with_source: bool, key: str) -> None:
    """The AER table of ``table``'s rows (model or None, method, extraction, AER, precision, recall,
    sentences, where from): models first, then the two directions combined, then the baselines;
    the last column only ``with_source``."""
    table = sorted(table, key=lambda t: (t[0] is None, t[0] is not None and PAIRED in t[0]))  # stable: keeps each group's order
    # the columns' names are English until shown; methods and links (extractions) are values, shown as they are
    frame = pd.DataFrame([{"model": model or _("(baseline)"), "method": method, "links": links, "AER": round(aer, 3),
                           "precision": round(precision, 3), "recall": round(recall, 3), "sentences": sentences,
                           "from": source}
                          for model, method, links, aer, precision, recall, sentences, source in table])
    headers = {"model": _("model"), "method": _("method"), "links": _("links"), "precision": _("precision"),
               "recall": _("recall"), "sentences": _("sentences"), "from": _("from")}
    st.dataframe((frame if with_source else frame.drop(columns="from")).rename(columns=headers), hide_index=True,
                 key=key)
    st.caption(_("AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|): A the links picked, S the sure human links, P the "
                 "possible ones. Attention aligns text like its training data best: on parliament text it may do "
                 "no better than the diagonal. A row “A + B” combines a model with one translating the other way, "
                 "as statistical aligners combine their two directions."))


def recorded_ui(models: list[offered_models.ModelInfo]) -> None:
    """What the models' cards record, for a page without a gold set yet: each gold set's table and
    every layer's and head's grid, as measured before the models were shipped."""
    sets = recorded_gold_sets(models)
    if not sets:
        return
    st.subheader(_("Recorded in the models' cards"))
    st.caption(_("Measured before the models were shipped, on gold sets this server does not offer. Upload them, "
                 "or gold alignments of your own, to measure again and draw each sentence."))
    labels = [ngettext("{name} ({n} sentence)", "{name} ({n} sentences)", g.sentences).format(name=ltr(md(g.name)), n=g.sentences)
              for g in sets]
    for tab, gold in zip(st.tabs(labels), sets):
        with tab:
            scores_table_ui(card_rows(gold.rows), with_source=False, key=f"align_card_table_{gold.name}")
            heads_ui(list(gold.rows), DEFAULT_EXTRACTION, key=f"{gold.name}_",
                     cards={m.name: m.card for m in models if m.card is not None})
            with st.expander(_("How these rows were measured")):
                for command in gold.provenance:
                    st.code(command, language="bash", wrap_lines=True)


def heads_ui(rows: list, how: str, key: str = "", cards: Optional[dict] = None) -> None:
    """The layer x head AER grid of each model with several attentions, in both readings, and
    its best head beside the model's default attention; ``key`` prefixes the charts' keys.
    ``cards`` {model: Card}: a card that records which heads matter shows that beside its grid."""
    for model in dict.fromkeys(r.model for r in rows if r.method == "heads" and r.extraction == how):
        st.subheader(_("{model}: every layer and head").format(model=ltr(md(model))))
        columns = st.columns(2)
        for column, shifted in zip(columns, (False, True)):
            title = (_("AER, shifted reading (the step where the word is the decoder's input)") if shifted
                     else _("AER, read at the step that outputs the word"))
            with column:
                chart_ui(grid_figure(head_grid(rows, model, how, shifted), title),
                         key=f"heads_grid_{key}{model}_{shifted}")
        best = best_head(rows, model, how)
        default = next((r for r in rows if r.model == model and r.method == "attention" and r.extraction == how), None)
        st.caption(_("Best: {which}, AER {aer:.3f}; the attention its other views show: AER {default}. Lower is "
                     "better; darker cells align worse.").format(
            which=reading_text(best), aer=row_aer(best), default=f"{row_aer(default):.3f}" if default is not None else "–"))
        card = (cards or {}).get(model)
        if card is not None and card.head_importance is not None:
            heads_matter_ui(card.head_importance, model, f"{key}{model}")


def sentence_ui(gold: GoldSet, measured: Measured, shown: list[Row], settings: AppSettings) -> None:
    st.subheader(_("Sentence by sentence"))
    baseline = _("baseline")
    labels = [f"{ltr(r.model) if r.model else baseline} · {r.method}" +
              (f" · {r.extraction}" if r.extraction in BOTH_DIRECTIONS else "") for r in shown]
    pick = st.selectbox(_("Source"), range(len(shown)), format_func=labels.__getitem__, key="align_row")
    row = shown[pick]
    order = sorted((k for k, c in enumerate(row.per_sentence) if c is not None),
                   key=lambda k: -row.per_sentence[k].aer)
    headers = {"sentence": _("sentence"), "English": _("English"), "French": _("French")}
    st.dataframe(pd.DataFrame([{"sentence": k + 1, "AER": round(row.per_sentence[k].aer, 3),
                                "English": " ".join(gold.sentences[k].src), "French": " ".join(gold.sentences[k].tgt)}
                               for k in order]).rename(columns=headers), hide_index=True, key="align_sentences")
    if not order:
        return
    number = st.number_input(_("Sentence to draw"), 1, len(gold.sentences), value=order[0] + 1, key="align_sentence")
    k = int(number) - 1
    matrix = row_matrix(row, k, gold, measured)
    if matrix is None:
        st.info(_("This source could not score that sentence."))
        return
    sentence = gold.sentences[k]
    if row.method == "eflomal":
        picked = set(measured.eflomal[k])
    elif row.extraction in BOTH_DIRECTIONS:
        forward, backward = (measured.matrices[name][k] for name in row.model.split(PAIRED))
        picked = both_directions(forward.attention, backward.attention)[row.extraction]
    else:
        picked = extract(matrix, row.extraction)
    chart_ui(answer_key_matrix(matrix, sentence.src, sentence.tgt, sentence.sure, sentence.possible, picked,
                                _("{source}, sentence {n}").format(source=labels[pick], n=k + 1), value_name=row.method),
              key="align_heatmap")  # drawn on a canvas: this page loads no plotly
    if row.model is None:  # a baseline: no model to be faithful to
        st.caption(_("This picture is scored against human links: that measures how well it aligns, not how "
                     "faithful it is to the model. Whether the output depends on the words it picks is measured on "
                     "the Translate page, under each heatmap and in the Explanations tab."))
        return
    gold_check_ui(row.model.split(PAIRED)[0], gold, k, matrix, settings)


def gold_check_ui(name: str, gold: GoldSet, k: int, matrix: np.ndarray, settings: AppSettings) -> None:
    """How faithful model ``name``'s drawn matrix of sentence ``k`` is to the model, forced to
    write the human translation (``alignments.gold_check``), and what the human links measure."""
    check = alignments.gold_check(name, gold, k, matrix, settings)
    if check is None:
        st.caption(_("This picture is scored against human links: that measures how well it aligns, not how "
                     "faithful it is to the model."))
        return
    st.caption(_("**How faithful is this picture?** Forced to write the human translation, {model}'s "
                 "log-probability per token changes by {method} when the source words this picture ranks first are "
                 "removed (the top 10, 20 and 50 percent: {counts} tokens), and by {random} when as many random words "
                 "are ({verdict}). The human links measure something else: how well the picture aligns.").format(
        model=ltr(md(name)), method=change_text(check.method), counts=", ".join(str(n) for n in check.removed),
        random=change_text(check.random),
        verdict=_("more than chance") if check.beats_random else _("no better than chance")))


def change_text(drop: float) -> str:
    """A check's drop as the signed change it is (a human translation's probability may rise when
    words go): "−0.64", "+0.11", "0.00"."""
    text = html_report.drop_text(-drop)
    return text if text == "0.00" else ("+" + text if drop < 0 else text.replace("-", "−"))


def row_matrix(row: Row, k: int, gold: GoldSet, measured: Measured) -> Optional[np.ndarray]:
    """The (French words, English words) matrix drawn for ``row`` at sentence ``k``."""
    sentence = gold.sentences[k]
    if row.method == "diagonal":
        return diagonal_matrix(len(sentence.tgt), len(sentence.src))
    if row.method == "eflomal":
        matrix = np.zeros((len(sentence.tgt), len(sentence.src)))
        for i, j in measured.eflomal[k]:
            matrix[j, i] = 1.0
        return matrix
    words: Optional[WordMatrices] = measured.matrices[row.model.split(PAIRED)[0]][k]  # a pair: its forward model's
    return None if words is None else words.of(row.method)


def unscored_text(u: Unscored) -> str:
    """Why a gold sentence was not scored, in the reader's language (markdown)."""
    if u.why == "empty":
        return _("the source sentence is empty") if u.side == "source" else _("the target sentence is empty")
    if u.why == "unencodable":
        word = ltr(md(repr(u.word)))
        return (_("the vocabulary encodes the source word {word} to nothing") if u.side == "source"
                else _("the vocabulary encodes the target word {word} to nothing")).format(word=word)
    return _("the source has {n} pieces; the model reads at most {most}").format(n=u.pieces, most=MAX_SOURCE_TOKENS)


def aligner_text(text: AlignerText) -> str:
    """What eflomal learnt from, in the reader's language (markdown; corpus names and paths as data)."""
    used = ", ".join(_("{corpus} ({pairs:,} pairs)").format(corpus=ltr(md(name)), pairs=pairs)
                     for name, pairs in text.used)
    said = _("the gold sentences plus {corpora}").format(corpora=used) if used else _("the gold sentences alone")
    if text.missing:
        said = _("{text}; not found, so not used: {paths}").format(
            text=said, paths=", ".join(ltr(md(path)) for path in text.missing))
    return said
