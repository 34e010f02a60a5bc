"""Evaluate page: upload a test set, score the models, BLEU by sentence length (the paper's
Figure 2), significance, and a per-sentence drill-down."""
from __future__ import annotations

from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st

from model.corpus.test_sets import (MAX_LINE_CHARS, MAX_LINES, EvalSet, join_consecutive)
from model.explaining.attention_ablation import ABLATIONS, Ablation
from model.decoding.search import SearchConfig
from model.core.errors import DataError, UserError
from model.explaining import registry
from model.explaining.explanation import LAYERS
from model.explaining.test_set import FIGURES
from model.scoring.evaluation import (
    STRESS_K,
    ModelRun,
    sentence_rows,
)
from viz.figures.heatmap import alignment_matrix
from viz.figures.length_chart import length_chart, length_lines
from viz.pages.parts import nav, widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.lost_uploads import lost_uploads_ui
from viz.i18n import N_, _, error_text, ltr, ngettext
from viz.pages.parts.safe_text import md
from viz.pages.parts.serving_ui import load_builtin_set, side_by_side_on_page, translator_for_page
from viz.figures.method_labels import method_label
from viz.pages.parts.faithfulness_ui import attention_check_ui, faithfulness_headers, unusable_ui
from viz.serving import evaluations, explanations, hosting, offered_models
from viz.serving.evaluations import content_digest
from viz.serving.builtin_sets import builtin_sets
from viz.serving.settings import AppSettings

# What production mode says for any checkpoint typed by path that cannot be used: the same words
# whether the path is outside the root, missing or broken, so nothing about the server leaks.
# Shown through _(); the English text is what the tests compare with.
HOSTED_EXTRA = N_("Only checkpoints inside the server's checkpoint folder can be evaluated; start the server "
                  "with --checkpoints DIR to offer your own models.")

# The test set's sources: the radio's values (kept in session state), shown through _().
TWO_FILES, ONE_TABLE, BUILT_IN = N_("Two files (source, reference)"), N_("One TSV/CSV file"), N_("Built-in test set")

# ABLATIONS' descriptions (model/explaining/attention_ablation.py), marked for the catalog: the page
# shows _(description); a description missing here stays English.
_ABLATION_LABELS = (N_("uniform α (the mean annotation)"), N_("diagonal α (step i reads source position i)"),
                    N_("one-hot argmax of α"), N_("last annotation only"))


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Evaluate"), url_path="evaluate", icon=":material/analytics:")


def render(settings: AppSettings) -> None:
    st.title(_("Evaluate"))
    st.caption(_("Score models on a test set: BLEU and chrF with confidence intervals (95%), the paired bootstrap test, BLEU by "
                 "sentence length (the paper's Figure 2) and every sentence to inspect."))
    models = offered_models.offered(settings)
    if not models:
        st.error(hosting.no_checkpoints_text(settings))
        return
    codes = [widgets.direction_code(d) for d in widgets.directions(models)]
    linked = builtin_sets(settings).get(st.query_params.get("test", ""))  # a link from the Paper page names a test set
    if linked and st.session_state.get("eval_link_applied") != linked.label:
        st.session_state.update(eval_direction=widgets.direction_code((linked.src_lang, linked.tgt_lang)))
    pair = widgets.direction_ui(codes, key="eval_direction")
    direction = tuple(pair.split("-"))
    search = widgets.search_settings_ui(prefix="eval_")
    test = eval_set_ui(direction, linked, settings)
    if test is None:
        return
    if test.cut_to:
        st.warning(_("Evaluating the first {n:,} lines only.").format(n=test.cut_to))
    if test.long_lines:
        st.warning(ngettext("{n} source line longer than {chars:,} characters was cut.",
                            "{n} source lines longer than {chars:,} characters were cut.", test.long_lines)
                   .format(n=test.long_lines, chars=MAX_LINE_CHARS))
    chosen = models_ui([m for m in models if m.direction == direction], settings)
    if not chosen:
        return
    stress = st.toggle(_("Length stress test: also evaluate items of k = {ks} joined lines").format(
        ks=", ".join(map(str, STRESS_K[1:]))), key="eval_stress")
    ablations = ablations_ui(chosen, settings)
    wanted = (content_digest(test), tuple(chosen), search, stress, ablations)
    run_col, cancel_col, _space = st.columns([1, 1, 6])
    if run_col.button(_("Evaluate"), type="primary", key="eval_run"):
        st.session_state["eval_request"] = wanted
    # Any click reruns the page, which stops a decode in progress; this one also forgets the request.
    cancel_col.button(_("Cancel"), key="eval_cancel", on_click=lambda: st.session_state.pop("eval_request", None))
    if st.session_state.get("eval_request") != wanted:
        st.caption(_("Press Evaluate to translate the test set with the chosen models."))
        return
    runs = {k: decode_all(chosen, join_consecutive(test, k) if k > 1 else test, search, settings,
                          ablations if k == 1 else ())
            for k in (STRESS_K if stress else (1,)) if len(test.src) >= k}
    results_ui(test, runs[1], search, pair, settings)
    if stress:
        stress_ui(test, runs)


def ablations_ui(chosen: list[str], settings: AppSettings) -> tuple[str, ...]:
    """Ways to replace the attention weights of the chosen RNNsearch models (model/explaining/attention_ablation.py),
    each decoded as one more run beside the unmodified model."""
    if not any(_has_attention(name, settings) for name in chosen):
        return ()
    shown = {kind: _(text) for kind, text in ABLATIONS.items()}
    return tuple(widgets.multiselect(_("Does attention matter? Also decode each attention model with its weights "
                                  "replaced"), list(ABLATIONS), format_func=shown.get, key="eval_ablate"))


def _has_attention(name: str, settings: AppSettings) -> bool:
    """Whether ``name`` has attention weights that decoding can replace (an imported Hugging Face
    model's run inside its own code and cannot be)."""
    found = offered_models.info(name, settings)
    return found is not None and found.has_attention and not found.arch.startswith("hf-")


def _cannot_use(name: str, exc: Exception) -> str:
    """A checkpoint that does not load, with why, for a local run (its text may name server paths)."""
    return _("Cannot use {name}: {error}").format(name=ltr(md(name)), error=md(error_text(exc)))


def models_ui(models: list[offered_models.ModelInfo], settings: AppSettings) -> list[str]:
    """Checkpoints to evaluate: any of the language pair's, plus a folder typed by path
    (in production mode only one inside the root; see hosting.resolve_checkpoint)."""
    names = [m.name for m in models]
    defaults = offered_models.default_models(models) if models else []
    chosen = widgets.multiselect(_("Models"), names, default=defaults, key="eval_models")
    extra = st.text_input(_("Also evaluate the checkpoint folder at this path (optional)"), key="eval_extra").strip()
    if extra:
        try:
            translator_for_page(extra, settings)  # validates the name, then the folder
            chosen = list(dict.fromkeys(chosen + [extra]))
        except UserError as exc:  # CheckpointError, CheckpointNameError
            st.error(hosting.error_text(exc, settings, _(HOSTED_EXTRA), local=_cannot_use(extra, exc)))
    if not chosen:
        st.info(_("Choose at least one model."))
    return chosen


def eval_set_ui(direction: tuple[str, str], linked, settings: AppSettings) -> EvalSet | None:
    builtin = builtin_sets(settings, direction)
    sources = [TWO_FILES, ONE_TABLE] + ([BUILT_IN] if builtin else [])  # values: English, shown translated
    if linked and linked.label in builtin and st.session_state.get("eval_link_applied") != linked.label:
        st.session_state.update(eval_link_applied=linked.label, eval_source_kind=BUILT_IN,
                                eval_builtin=linked.label)
    # labels translated now: a format_func may be called outside this run (AppTest does)
    kind = st.radio(_("Test set"), sources, horizontal=True, format_func={s: _(s) for s in sources}.get,
                    key="eval_source_kind")
    take_first = st.checkbox(_("If larger than {n:,} lines, evaluate the first {n:,}").format(n=MAX_LINES),
                             key="eval_first")
    src_lang, tgt_lang = (widgets.language_name(lang) for lang in direction)
    try:
        if kind == BUILT_IN:
            return builtin_ui(builtin, direction, settings)
        if kind == ONE_TABLE:
            upload = st.file_uploader(_("TSV or CSV with source ({src}) and reference ({tgt}) columns").format(
                src=src_lang, tgt=tgt_lang), key="eval_table")
            lost_uploads_ui("uploaded", None if upload is None else [upload.name])
            if upload is None:
                return None
            with st.spinner(_("Reading the test set...")):
                return evaluations.read_upload((upload.getvalue(),), (upload.name,), take_first)
        left, right = st.columns(2)
        src_file = left.file_uploader(_("Source ({language}), one sentence per line, plain or .gz").format(
            language=src_lang), key="eval_src")
        ref_file = right.file_uploader(_("Reference ({language}), line-aligned").format(language=tgt_lang),
                                       key="eval_ref")
        lost_uploads_ui("uploaded", [f.name for f in (src_file, ref_file) if f is not None] or None)
        if src_file is None or ref_file is None:
            st.info(_("Upload both files, or pick a built-in test set.") if builtin else
                    _("Upload both files. The shipped models' scores on the test sets of their training corpora are "
                      "on the Models page."))
            return None
        with st.spinner(_("Reading the test set...")):
            return evaluations.read_upload((src_file.getvalue(), ref_file.getvalue()), (src_file.name, ref_file.name),
                                take_first)
    except DataError as exc:
        st.error(error_text(exc))
        return None


def builtin_ui(builtin: dict, direction: tuple[str, str], settings: AppSettings) -> EvalSet | None:
    if st.session_state.get("eval_builtin") not in builtin:
        st.session_state["eval_builtin"] = next(iter(builtin))
    name = st.selectbox(_("Test set ({direction}), from the offered models' training corpora").format(
        direction=widgets.direction_label(direction)), list(builtin), key="eval_builtin")
    try:
        return load_builtin_set(builtin[name])
    except DataError as exc:  # its message names files on the server
        st.error(hosting.error_text(exc, settings, _("The built-in test set {name} could not be read.").format(
            name=ltr(name))))
        return None


def is_ablation(run_name: str) -> bool:
    """Whether a run is a model's ablated run (named ``model+kind`` by ``decode_all``)."""
    return run_name.rpartition("+")[2] in ABLATIONS


def decode_all(names: list[str], test: EvalSet, search: SearchConfig, settings: AppSettings,
               ablations: tuple[str, ...] = ()) -> list[ModelRun]:
    """Each model's run (and each attention model's ablated runs, named ``model+ablation``), from
    the shared store when the same content and decoding were seen before; the runs decode side
    by side, each with its own progress bar."""
    archs = {}
    for name in names:
        try:
            archs[name] = translator_for_page(name, settings).arch
        except UserError as exc:  # CheckpointError: a listed folder that does not load
            st.error(hosting.error_text(exc, settings, _("Checkpoint {name} does not load on this server.").format(
                name=ltr(name)), local=_cannot_use(name, exc)))
            st.stop()
    jobs = [(name, name, search) for name in names] + [
        (f"{name}+{kind}", name, replace(search, ablation=Ablation(kind))) for name in names
        if _has_attention(name, settings) for kind in ablations]
    bars = [st.progress(0.0, text=_("{name}: starting").format(name=ltr(job[0]))) for job in jobs]
    runs = side_by_side_on_page([partial(decode_run, name, archs[name], test, job_search, settings, bar, label)
                                 for (label, name, job_search), bar in zip(jobs, bars)])
    for bar in bars:
        bar.empty()
    return runs


def decode_run(name: str, arch: str, test: EvalSet, search: SearchConfig, settings: AppSettings, bar,
               label: str = "") -> ModelRun:
    """``evaluations.evaluation_run`` with its progress and its queued line on ``bar``."""
    name_shown = label or name
    total, shown = len(test.src), [0.0]

    def progress(done: int) -> None:
        shown[0] = done / total
        bar.progress(shown[0], text=_("{name}: {done}/{total} sentences").format(name=ltr(name_shown), done=done,
                                                                                   total=total))

    return evaluations.evaluation_run(name, arch, test, search, settings, label, progress,
                                      lambda text: bar.progress(shown[0], text=f"{ltr(name_shown)}: {text}"))


def results_ui(test: EvalSet, runs: list[ModelRun], search: SearchConfig, pair: str, settings: AppSettings) -> None:
    key = (content_digest(test), tuple(r.name for r in runs), search)  # what the runs depend on
    scores_ui(key, test, runs)
    width = st.slider(_("Length bucket width (words)"), 2, 20, 10, key="eval_width")
    rows = evaluations.length_rows(key, width, test, runs)
    chart_ui(length_lines(rows, _("BLEU by source sentence length, {name}").format(name=ltr(test.name))),
             key="eval_length_chart")
    table_ui(test, runs, pair, settings)
    downloads_ui(test, runs, rows)
    faithfulness_ui(test, [r for r in runs if not is_ablation(r.name)], settings)


def scores_ui(key: tuple, test: EvalSet, runs: list[ModelRun]) -> None:
    with st.spinner(_("Scoring...")):
        rows, paired = evaluations.scores(key, test, runs)
    table = pd.DataFrame([{"model": r["model"], "BLEU": r["bleu"], "BLEU 95% ±": r["bleu_ci95"], "chrF": r["chrf"],
                           "chrF 95% ±": r["chrf_ci95"], "BLEU (lowercased)": r["bleu_lc"],
                           "sentences/s": r["sentences/s"]} for r in rows])
    headers = {"model": _("model"), "BLEU 95% ±": _("BLEU 95% ±"), "chrF 95% ±": _("chrF 95% ±"),
               "BLEU (lowercased)": _("BLEU (lowercased)"), "sentences/s": _("sentences/s")}
    st.dataframe(table.rename(columns=headers), hide_index=True, key="eval_scores")
    st.caption(_("BLEU signature: {bleu} · chrF signature: {chrf}").format(bleu=ltr(rows[0]["bleu_signature"]),
                                                                          chrf=ltr(rows[0]["chrf_signature"])))
    if paired:
        other = paired["systems"][1]
        significant = other["p_value"] is not None and other["p_value"] < 0.05
        text = (_("**Paired bootstrap** ({signature}): {name} vs {baseline}, p = {p:.4f} (significant at 0.05)")
                if significant else
                _("**Paired bootstrap** ({signature}): {name} vs {baseline}, p = {p:.4f} (not significant at 0.05)"))
        st.markdown(text.format(signature=ltr(md(paired["signature"])), name=ltr(md(other["name"])),
                                baseline=ltr(md(paired["baseline"])), p=other["p_value"]))


def sentence_headers(runs: list[ModelRun]) -> dict[str, str]:
    """The per-sentence table's column names (``sentence_rows``) as shown, in the reader's language."""
    headers = {"id": _("id"), "source": _("source"), "reference": _("reference"), "source_words": _("source_words"),
               "BLEU difference": _("BLEU difference")}
    for run in runs:
        name = ltr(run.name)
        headers.update({f"{run.name} BLEU": _("{name} BLEU").format(name=name),
                        f"{run.name} coverage": _("{name} coverage").format(name=name),
                        f"{run.name} entropy": _("{name} entropy").format(name=name)})
    return headers


def table_ui(test: EvalSet, runs: list[ModelRun], pair: str, settings: AppSettings) -> None:
    frame = pd.DataFrame(sentence_rows(test, runs))
    query = st.text_input(_("Filter sentences (substring of source, reference or outputs)"), key="eval_filter")
    if query:
        mask = frame.astype(str).apply(lambda col: col.str.contains(query, case=False, regex=False)).any(axis=1)
        frame = frame[mask]
    event = st.dataframe(frame.rename(columns=sentence_headers(runs)), hide_index=True, on_select="rerun",
                         selection_mode="single-row", key="eval_table_view")
    selected = [r for r in (event.selection.rows if event and event.selection else []) if r < len(frame)]
    if selected:  # a row click moves the number box (its value lives under its key)
        st.session_state["eval_row"] = int(frame.iloc[selected[0]]["id"])
    row_id = st.number_input(_("Sentence id to inspect"), 0, len(test.src) - 1, key="eval_row")
    drilldown_ui(test, runs, int(row_id), pair, settings)


def drilldown_ui(test: EvalSet, runs: list[ModelRun], i: int, pair: str, settings: AppSettings) -> None:
    st.caption(_("Source"))
    st.text(test.src[i])
    st.caption(_("Reference"))
    st.text(test.ref[i])
    for column, run in zip(st.columns(len(runs)), runs):
        with column:
            trace = run.traces[i]
            st.markdown(f"**{md(run.name)}**")
            st.text(trace.translation)
            if trace.attention is not None:
                chart_ui(alignment_matrix(trace.attention, trace.source_tokens, trace.target_tokens),
                         key=f"eval_heatmap_{run.name}")
                if is_ablation(run.name):  # weights put there by hand, not the model's own
                    st.caption(_("These weights were put there, not learnt: the Evaluate page measures what that "
                                 "costs, not how faithful they are."))
                else:
                    attention_check_ui(run.name, translator_for_page(run.name, settings), trace, settings,
                                                       short=True)
    names = [r.name for r in runs if not is_ablation(r.name)]  # models, not their ablations
    if names:  # a link the Translate page reads like any other (url_state.View): no widget of it set from here
        st.page_link(nav.link("translate"), label=_("Open in the Translate page"), icon=":material/arrow_forward:",
                     query_params={"pair": pair, "src": test.src[i], "left": names[0], "right": names[-1],
                                   "ref": test.ref[i], **widgets.app_params()})


def downloads_ui(test: EvalSet, runs: list[ModelRun], rows: list[dict]) -> None:
    columns = st.columns(len(runs) + 2)
    for column, run in zip(columns, runs):
        column.download_button(_("{name} hypotheses").format(name=ltr(run.name)), "\n".join(run.hyps) + "\n",
                               file_name=f"hyps.{run.name}.txt", key=f"eval_dl_{run.name}", on_click="ignore")
    # the CSV is a data file: its column names stay English in every language
    # the two files are made when their buttons are clicked, not on every run of the page
    columns[-2].download_button(_("Per-sentence table (CSV)"),
                                widgets.deferred(lambda: pd.DataFrame(sentence_rows(test, runs)).to_csv(index=False)),
                                file_name="sentences.csv", mime="text/csv", key="eval_dl_csv", on_click="ignore")
    columns[-1].download_button(_("Length chart (HTML)"),
                                widgets.deferred(lambda: length_chart(rows).to_html(include_plotlyjs="cdn")),
                                file_name="length_chart.html", mime="text/html", key="eval_dl_chart", on_click="ignore")
    st.caption(_("PNG or SVG of any chart: its download button, top right, shown on hover."))


FAITHFULNESS_MAX = 500  # sentences measured at most


def faithfulness_ui(test: EvalSet, runs: list[ModelRun], settings: AppSettings) -> None:
    """Which explanation is faithful on this test set: each method's mean figures with 95%
    intervals beside a random order's (model/explaining/test_set.py), on request."""
    st.subheader(_("How faithful is each explanation on this test set?"))
    st.caption(_("For each sentence, the source words a method ranks first are removed and the model's own "
                 "translation is re-scored; the figures are means over the sentences, and ± marks a confidence "
                 "interval (95%). A method whose deletion interval lies wholly below the random order's found what "
                 "the model used. The Translate page's Explanations tab shows the same for one sentence."))
    offered = list(registry.applicable(any(r.traces and r.traces[0].attention is not None for r in runs),
                                       anatomy=any(_has_anatomy(r) for r in runs)))
    offered += [LAYERS] if any(r.traces and r.traces[0].cross_attention is not None for r in runs) else []
    chosen = tuple(widgets.multiselect(_("Methods"), offered,
                                       default=[m for m in (*registry.defaults(), LAYERS) if m in offered],
                                       format_func=method_label, key="eval_faith_methods"))
    limit = int(st.number_input(_("Sentences (the first ones)"), 1, min(FAITHFULNESS_MAX, len(test.src)),
                                min(50, len(test.src)), key="eval_faith_n"))
    wanted = (content_digest(test), tuple(r.name for r in runs), chosen, limit)
    if st.button(_("Measure faithfulness"), key="eval_faith_run", disabled=not chosen):
        st.session_state["eval_faith_request"] = wanted
    if st.session_state.get("eval_faith_request") != wanted:
        st.caption(_("About a second per sentence and model (integrated gradients: several)."))
        return
    for run in runs:
        bar = st.progress(0.0, text=_("{name}: starting").format(name=ltr(run.name)))
        found = explanations.test_set_faithfulness(
            run, wanted[0], chosen, limit, settings,
            lambda done, total, bar=bar, name=run.name: bar.progress(done / total, text=_(
                "{name}: {done}/{total} sentences").format(name=ltr(name), done=done, total=total)))
        bar.empty()
        unusable_ui(run.name, chosen, _has_anatomy(run))
        faithfulness_table_ui(found)


def _has_anatomy(run: ModelRun) -> bool:
    """Whether ``run``'s model can be taken apart layer by layer (read from its architecture, no model loaded)."""
    return run.arch in offered_models.ANATOMY_ARCHS


def faithfulness_table_ui(found) -> None:
    def cell(row: dict, key: str) -> str:
        return f"{row[key].mean:.3f} ± {row[key].ci95:.3f}" if key in row else ""

    rows = [[_("random order") if m == "random" else method_label(m)] + [cell(row, k) for k in FIGURES]
            for m, row in found.ranked() + [("random", found.random)]]
    st.markdown(f"**{md(found.model)}** · " + ngettext("{n} sentence", "{n} sentences", found.sentences).format(
        n=found.sentences))
    st.dataframe(pd.DataFrame(rows, columns=faithfulness_headers()), hide_index=True, key=f"eval_faith_{found.model}")
    if found.best_beats_random():
        st.caption(_("The best method's deletion interval lies wholly below the random order's."))
    else:
        st.caption(_("The best method's deletion interval is not wholly below the random order's: on these "
                     "sentences no method is clearly more faithful than chance."))


def stress_ui(test: EvalSet, runs: dict[int, list[ModelRun]]) -> None:
    """BLEU against source length over all joined versions: the paper's Figure 2 on demand."""
    st.subheader(_("Length stress test"))
    rows, summary = evaluations.stress_rows(test, runs)
    chart_ui(length_lines(rows, _("BLEU by source length, k = {ks} joined lines").format(ks=", ".join(map(str, runs)))),
             key="eval_stress_chart")
    headers = {"model": _("model"), "items": _("items"), "bleu": _("bleu"), "length_ratio": _("length_ratio")}
    st.dataframe(pd.DataFrame(summary).rename(columns=headers), hide_index=True, key="eval_stress_table")
