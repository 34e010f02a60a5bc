"""Alignment page: how well does each model's attention align words, measured against human
word alignments, beside saliency, a statistical aligner and the diagonal (model/scoring/attention_alignment.py)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import streamlit as st

from model.core.errors import DataError, UserError
from model.cards.schema import AlignmentScore
from model.corpus.corpora import corpus_specs
from model.decoding.translator import MAX_SOURCE_TOKENS
from model.scoring.attention_alignment import (
    METHODS,
    PAIRED,
    AlignerText,
    Row,
    ScoredModel,
    Unscored,
    WordMatrices,
    both_directions_rows,
    diagonal_rows,
    eflomal_gold_links,
    eflomal_row,
    gold_digest,
    opposite_pairs,
    score_model,
    training_corpus,
)
from model.scoring.word_alignment import (
    BOTH_DIRECTIONS,
    EXTRACTIONS,
    GoldSet,
    both_directions,
    diagonal_matrix,
    extract,
    read_gold,
)
from viz.figures.heatmap import answer_key_heatmap
from viz.pages.parts import widgets
from viz.i18n import N_, _, error_text, ltr, ngettext
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import queue_notice
from viz.serving import hosting, offered_models, statistical_overlay
from viz.serving.decodes import QueuedSlot, load_translator, shared_store
from viz.serving.settings import REPO, AppSettings

ALIGN_LANGS = ("en", "fr")  # the languages of the gold sets (source, target)
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
}
# Where the gold set comes from: the radio's values (kept in session state), shown through _().
BUILT_IN_GOLD, UPLOAD_GOLD = N_("Built-in gold set"), N_("Upload three files")


def described(descriptions: dict[str, str]) -> dict[str, str]:
    """{name: its option's label}: the name (a value, left to right) and its description, in the
    reader's language now (a format_func may be called outside this script run: AppTest does)."""
    return {name: f"{ltr(name)}: {_(text)}" for name, text in descriptions.items()}


@dataclass(frozen=True)
class Measured:
    """Everything the page shows for one gold set and choice of models and sources."""

    rows: tuple[Row, ...]  # every extraction for the models; eflomal and the diagonal once
    unscored: tuple[Unscored, ...]
    matrices: dict  # model name -> its WordMatrices per sentence (None where unscored)
    eflomal: Optional[tuple]  # eflomal's links per sentence
    eflomal_corpus: Optional[AlignerText]  # what eflomal learnt from, when it ran


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Alignment"), url_path="alignment", icon=":material/grid_on:")


def builtin_gold(settings: AppSettings) -> dict[str, tuple[Path, Path, Path]]:
    """{name: (English file, French file, links file)} of the gold sets in the folder
    ``--align-dir`` names (NAME.en, NAME.fr and NAME.wa side by side)."""
    folder = settings.align_dir
    if not folder.is_dir():
        return {}
    return {wa.stem: (wa.with_suffix(".en"), wa.with_suffix(".fr"), wa) for wa in sorted(folder.glob("*.wa"))
            if wa.with_suffix(".en").is_file() and wa.with_suffix(".fr").is_file()}


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
        return
    gold, digest = picked
    chosen = models_ui(models)
    methods = widgets.multiselect(_("Sources"), METHODS, default=[m for m in METHODS if m != "eflomal" or statistical_overlay.available()],
                             format_func=described(METHOD_HELP).get, key="align_methods")
    if not chosen and not set(methods) & {"eflomal", "diagonal"}:
        st.info(_("Choose a model or a baseline."))
        return
    how = st.selectbox(_("Links from a matrix"), EXTRACTIONS, format_func=described(EXTRACTION_HELP).get,
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
            measured = measure(gold, names, wanted_methods, settings)
        except UserError as exc:
            st.error(hosting.error_text(exc, settings, _("The measurement could not run on this server.")))
            return
    if measured is None and not recorded.rows:
        return
    results_ui(gold, None if level == "all" else recorded, measured, how, settings)
    if level == "all":
        sentence_ui(gold, measured, shown_rows(measured.rows, how))


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


BASELINES = ("eflomal", "diagonal")


@dataclass(frozen=True)
class Recorded:
    """The results the chosen models' cards record for this gold set (the same sentences, by
    digest), and what they do not record."""

    rows: tuple[AlignmentScore, ...]
    provenance: tuple[str, ...]  # how the recorded rows were measured: the commands, deduplicated
    missing_models: tuple[str, ...]  # chosen models whose rows are not all recorded
    missing_baselines: tuple[str, ...]

    @property
    def complete(self) -> bool:
        return bool(self.rows) and not self.missing_models and not self.missing_baselines


def recorded_results(gold: GoldSet, digest: str, models: list[offered_models.ModelInfo], methods: tuple[str, ...],
                     how: str) -> Recorded:
    """What the cards of ``models`` record for ``gold`` (whose ``gold_digest`` is ``digest``) with
    extraction ``how``."""
    results = _card_results(gold, digest, models)
    rows, provenance, missing = [], [], []
    for m in models:
        wanted = [x for x in ("attention", "saliency") if x in methods and (x == "saliency" or m.has_attention)]
        found = [r for r in results[m.name].rows if r.model == m.name and r.method in wanted and r.extraction == how] \
            if m.name in results else []
        if len(found) < len(wanted):
            missing.append(m.name)
            continue
        rows += found
        if found:
            provenance.append(results[m.name].command)
    if "attention" in methods:  # the two directions combined: recorded, else both models measured again
        for forward, backward in opposite_pairs([Side(m.name, m.direction == ALIGN_LANGS, corpora_of(m), m.has_attention)
                                                 for m in models]):
            name = f"{forward.name}{PAIRED}{backward.name}"
            found = [r for result in results.values() for r in result.rows if r.model == name]
            found = list({r.extraction: r for r in found}.values())  # each card of the two holds the rows
            if len(found) == len(BOTH_DIRECTIONS) and not {forward.name, backward.name} & set(missing):
                rows += found
            else:
                missing += [n for n in (forward.name, backward.name) if n not in missing]
    baselines = {}
    for result in results.values():
        for r in result.rows:
            if r.model is None and r.method in methods and r.method not in baselines:
                baselines[r.method] = r
                provenance.append(result.command)
    rows += [baselines[b] for b in BASELINES if b in baselines]
    missing_baselines = tuple(b for b in BASELINES if b in methods and b not in baselines)
    rows = [r for r in rows if r.model is None or r.model.split(PAIRED)[0] not in missing]  # measured again instead
    return Recorded(tuple(rows), tuple(dict.fromkeys(provenance)), tuple(missing), missing_baselines)


def _card_results(gold: GoldSet, digest: str, models: list[offered_models.ModelInfo]) -> dict:
    """{model name: its card's AlignmentResult for ``gold``}, only results of the same sentences:
    the card's digest, or for older cards the set's name and size."""
    results = {}
    for m in models:
        result = m.card.alignment.get(gold.name) if m.card else None
        if result is not None and result.sentences == len(gold.sentences) and result.gold_digest in ("", digest):
            results[m.name] = result
    return results


@dataclass(frozen=True)
class Side:
    """A model as ``opposite_pairs`` pairs it up, before any matrix is computed."""

    name: str
    forward: bool  # translates English into French
    corpora: tuple[str, ...]
    has_attention: bool


def corpora_of(model: offered_models.ModelInfo) -> tuple[str, ...]:
    """The names of the corpora a model trained on; empty when its config does not say."""
    return tuple(c.name for c in corpus_specs(model.train)) if model.train is not None else ()


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
            return _read_builtin(*builtin[name])
        left, middle, right = st.columns(3)
        src = left.file_uploader(_("English, tokenised (words separated by spaces), one sentence per line"),
                                 key="align_src")
        tgt = middle.file_uploader(_("French, tokenised, line-aligned"), key="align_tgt")
        links = right.file_uploader(_("Links: .wa (SENT EN FR S|P, from 1) or Pharaoh (i-j, i?j, from 0)"),
                                    key="align_links")
        if src is None or tgt is None or links is None:
            st.info(_("Upload the three files, or pick a built-in gold set.") if builtin else
                    _("Upload the three files. Start the app with `--align-dir DIR` to offer the gold sets of "
                      "a folder (NAME.en, NAME.fr, NAME.wa) without uploading."))
            return None
        return _read_upload((src.getvalue(), tgt.getvalue(), links.getvalue()), (src.name, tgt.name, links.name)), None
    except DataError as exc:  # names the file and line; uploads are written under their own names
        st.error(md(error_text(exc)))
        return None


@st.cache_data(show_spinner=False, max_entries=8)
def _read_builtin(en: Path, fr: Path, links: Path) -> tuple[GoldSet, str]:
    """A built-in gold set and its ``gold_digest``, read and fingerprinted once per set of files."""
    gold = read_gold(en, fr, links)
    return gold, gold_digest(gold)


def _read_upload(files: tuple[bytes, bytes, bytes], names: tuple[str, str, str]) -> GoldSet:
    """Uploads go through the same reader as files: written to a private folder under their
    own base names (a .wa links file is NAACL, any other Pharaoh), so errors name the user's
    files and never the server's folder."""
    import re
    import tempfile

    safe = [f"{k}-{re.sub(r'[^A-Za-z0-9._-]', '_', Path(name).name)[-80:] or 'file'}" for k, name in enumerate(names)]
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / name for name in safe]
        for path, data in zip(paths, files):
            path.write_bytes(data)
        try:
            gold = read_gold(*paths)
        except DataError as exc:
            def theirs(value):  # the user's own file names for the private copies'
                if not isinstance(value, str):
                    return value
                value = value.replace(f"{tmp}/", "")
                for name, original in zip(safe, names):
                    value = value.replace(name, Path(original).name)
                return value
            raise DataError(theirs(exc.template), **{k: theirs(v) for k, v in exc.params.items()}) from None
    return GoldSet(Path(names[2]).stem, gold.sentences)


def models_ui(models: list[offered_models.ModelInfo]) -> list[str]:
    names = [m.name for m in models]
    defaults = [n for n in dict.fromkeys(offered_models.default_pair(models)) if n in names]
    labels = {m.name: m.label for m in models}
    return widgets.multiselect(_("Models"), names, default=defaults, format_func=labels.get, key="align_models")


def measure(gold: GoldSet, names: tuple[str, ...], methods: tuple[str, ...], settings: AppSettings) -> Measured:
    """The measurement, once per server for the same gold set, models and sources."""
    store = shared_store("alignments", 8)
    key = (gold, names, methods, settings.checkpoints)
    found = store.get(key)
    if found is None:
        notice = queue_notice()
        with QueuedSlot(settings, notice.show, notice.clear)():
            with st.spinner(_("Forcing each model through the gold translations...")):
                found = _measure(gold, names, methods, settings)
        store.put(key, found)
    return found


def _measure(gold: GoldSet, names: tuple[str, ...], methods: tuple[str, ...], settings: AppSettings) -> Measured:
    rows, unscored, matrices, scored = [], [], {}, []
    for name in names:
        info = offered_models.info(name, settings)
        found, missed, matrices[name] = score_model(name, load_translator(name, settings), info.direction, gold,
                                                    methods, EXTRACTIONS, *ALIGN_LANGS)
        rows, unscored = rows + found, unscored + missed
        scored.append(ScoredModel(name, info.direction == ALIGN_LANGS, corpora_of(info), tuple(matrices[name])))
    if "attention" in methods:  # an en->fr and a fr->en model of the same corpora, symmetrised
        for forward, backward in opposite_pairs(scored):
            rows += both_directions_rows(forward.name, forward.matrices, backward.name, backward.matrices, gold)
    links, note = None, None
    if "eflomal" in methods:
        folders = [hosting.resolve_checkpoint(n, settings) for n in names]
        corpus, note = training_corpus(folders, [], *ALIGN_LANGS, root=REPO)
        links = tuple(eflomal_gold_links(gold, corpus))
        rows.append(eflomal_row(gold, links))
    if "diagonal" in methods:
        rows += diagonal_rows(gold, ("target",))
    return Measured(tuple(rows), tuple(unscored), matrices, links, note)


def shown_rows(rows, how: str) -> list:
    """The rows of extraction ``how``, the two directions' combined rows and the baselines."""
    return [r for r in rows if r.model is None or r.extraction == how or r.extraction in BOTH_DIRECTIONS]


def results_ui(gold: GoldSet, recorded: Optional[Recorded], measured: Optional[Measured], how: str,
               settings: AppSettings) -> None:
    """The AER table: rows the cards record (``recorded``) and rows measured now, models first,
    then the two directions combined, then the baselines."""
    table = [(r.model, r.method, r.extraction, r.aer, r.precision, r.recall, r.sentences, _("card"))
             for r in (recorded.rows if recorded else ())]
    table += [(r.model, r.method, r.extraction, r.counts.aer, r.counts.precision, r.counts.recall, r.sentences,
               _("measured now")) for r in (shown_rows(measured.rows, how) if measured else ())]
    table.sort(key=lambda t: (t[0] is None, t[0] is not None and PAIRED in t[0]))  # stable: keeps each group's order
    # the columns' names are English until shown; methods and links (extractions) are values, shown as they are
    frame = pd.DataFrame([{"model": model or _("(baseline)"), "method": method, "links": links, "AER": round(aer, 3),
                           "precision": round(precision, 3), "recall": round(recall, 3), "sentences": sentences,
                           "from": source}
                          for model, method, links, aer, precision, recall, sentences, source in table])
    headers = {"model": _("model"), "method": _("method"), "links": _("links"), "precision": _("precision"),
               "recall": _("recall"), "sentences": _("sentences"), "from": _("from")}
    st.dataframe((frame if recorded else frame.drop(columns="from")).rename(columns=headers), hide_index=True,
                 key="align_table")
    st.caption(_("AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|): A the links picked, S the sure human links, P the "
                 "possible ones. Attention aligns text like its training data best: on parliament text it may do "
                 "no better than the diagonal. A row “A + B” combines a model with one translating the other way, "
                 "as statistical aligners combine their two directions."))
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


def sentence_ui(gold: GoldSet, measured: Measured, shown: list[Row]) -> None:
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
    widgets.show_chart(answer_key_heatmap(matrix, sentence.src, sentence.tgt, sentence.sure, sentence.possible, picked,
                                          _("{source}, sentence {n}").format(source=labels[pick], n=k + 1),
                                          value_name=row.method),
                       key="align_heatmap")


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
    return None if words is None else getattr(words, row.method)


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
