"""Evaluate page: upload a test set, score the models, BLEU by sentence length (the paper's
Figure 2), significance, and a per-sentence drill-down."""
from __future__ import annotations

import hashlib
import html
from dataclasses import replace
from functools import partial

import pandas as pd
import streamlit as st

from model.corpus.licences import LANGUAGES
from model.corpus.test_sets import MAX_LINES, EvalSet, eval_set_from_files, eval_set_from_table, join_consecutive
from model.decoding.attention_ablation import ABLATIONS
from model.decoding.search import SearchConfig
from model.errors import DataError, UserError
from model.scoring.evaluation import (
    STRESS_K,
    ModelRun,
    bleu_by_length,
    paired_significance,
    sentence_rows,
    stress_report,
    with_interval,
)
from viz.figures.heatmap import alignment_heatmap
from viz.figures.length_chart import length_chart
from viz.pages import nav, widgets
from viz.pages.safe_text import md
from viz.pages.serving_ui import load_builtin_set, load_translator, side_by_side
from viz.serving import decodes, hosting, offered_models
from viz.serving.builtin_sets import builtin_sets
from viz.serving.decodes import shared_store
from viz.serving.settings import AppSettings

# What production mode says for any checkpoint typed by path that cannot be used: the same words
# whether the path is outside the root, missing or broken, so nothing about the server leaks.
HOSTED_EXTRA = ("Only checkpoints inside the server's checkpoint folder can be evaluated; start the server "
                "with --checkpoints DIR to offer your own models.")


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title="Evaluate", url_path="evaluate", icon=":material/analytics:")


def render(settings: AppSettings) -> None:
    st.title("Evaluate")
    st.caption("Score models on a test set: BLEU and chrF with 95% intervals, the paired bootstrap test, BLEU by "
               "sentence length (the paper's Figure 2) and every sentence to inspect.")
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
    for note in test.notes:
        st.warning(note)
    chosen = models_ui([m for m in models if m.direction == direction], settings)
    if not chosen:
        return
    stress = st.toggle(f"Length stress test: also evaluate items of k = {', '.join(map(str, STRESS_K[1:]))} "
                       "joined lines", key="eval_stress")
    ablations = ablations_ui(chosen, settings)
    wanted = (content_digest(test), tuple(chosen), search, stress, ablations)
    run_col, cancel_col, _ = st.columns([1, 1, 6])
    if run_col.button("Evaluate", type="primary", key="eval_run"):
        st.session_state["eval_request"] = wanted
    # Any click reruns the page, which stops a decode in progress; this one also forgets the request.
    cancel_col.button("Cancel", key="eval_cancel", on_click=lambda: st.session_state.pop("eval_request", None))
    if st.session_state.get("eval_request") != wanted:
        st.caption("Press Evaluate to translate the test set with the chosen models.")
        return
    runs = {k: decode_all(chosen, join_consecutive(test, k) if k > 1 else test, search, settings,
                          ablations if k == 1 else ())
            for k in (STRESS_K if stress else (1,)) if len(test.src) >= k}
    results_ui(test, runs[1], search, pair)
    if stress:
        stress_ui(test, runs)


def ablations_ui(chosen: list[str], settings: AppSettings) -> tuple[str, ...]:
    """Ways to replace the attention weights of the chosen RNNsearch models (model/decoding/attention_ablation.py),
    each decoded as one more run beside the unmodified model."""
    if not any(_has_attention(name, settings) for name in chosen):
        return ()
    return tuple(st.multiselect("Does attention matter? Also decode each attention model with its weights "
                                "replaced", list(ABLATIONS), format_func=ABLATIONS.get, key="eval_ablate"))


def _has_attention(name: str, settings: AppSettings) -> bool:
    found = offered_models.info(name, settings)
    return found is not None and found.has_attention


def models_ui(models: list[offered_models.ModelInfo], settings: AppSettings) -> list[str]:
    """Checkpoints to evaluate: any of the language pair's, plus a folder typed by path
    (in production mode only one inside the root; see hosting.resolve_checkpoint)."""
    names = [m.name for m in models]
    defaults = list(dict.fromkeys(offered_models.default_pair(models))) if models else []
    chosen = st.multiselect("Models", names, default=defaults, key="eval_models")
    extra = st.text_input("Also evaluate the checkpoint folder at this path (optional)", key="eval_extra").strip()
    if extra:
        try:
            load_translator(extra, settings)  # validates the name, then the folder
            chosen = list(dict.fromkeys(chosen + [extra]))
        except UserError as exc:  # CheckpointError, CheckpointNameError
            st.error(hosting.error_text(exc, settings, HOSTED_EXTRA, local=md(f"Cannot use {extra}: {exc}")))
    if not chosen:
        st.info("Choose at least one model.")
    return chosen


def eval_set_ui(direction: tuple[str, str], linked, settings: AppSettings) -> EvalSet | None:
    builtin = builtin_sets(settings, direction)
    sources = ["Two files (source, reference)", "One TSV/CSV file"] + (["Built-in test set"] if builtin else [])
    if linked and linked.label in builtin and st.session_state.get("eval_link_applied") != linked.label:
        st.session_state.update(eval_link_applied=linked.label, eval_source_kind="Built-in test set",
                                eval_builtin=linked.label)
    kind = st.radio("Test set", sources, horizontal=True, key="eval_source_kind")
    take_first = st.checkbox(f"If larger than {MAX_LINES:,} lines, evaluate the first {MAX_LINES:,}", key="eval_first")
    src_lang, tgt_lang = (LANGUAGES.get(lang, lang) for lang in direction)
    try:
        if kind.startswith("Built-in"):
            return builtin_ui(builtin, direction, settings)
        if kind.startswith("One"):
            upload = st.file_uploader(f"TSV or CSV with source ({src_lang}) and reference ({tgt_lang}) columns",
                                      key="eval_table")
            return None if upload is None else parse_upload((upload.getvalue(),), (upload.name,), take_first)
        left, right = st.columns(2)
        src_file = left.file_uploader(f"Source ({src_lang}), one sentence per line, plain or .gz", key="eval_src")
        ref_file = right.file_uploader(f"Reference ({tgt_lang}), line-aligned", key="eval_ref")
        if src_file is None or ref_file is None:
            st.info("Upload both files, or pick a built-in test set.")
            return None
        return parse_upload((src_file.getvalue(), ref_file.getvalue()), (src_file.name, ref_file.name), take_first)
    except DataError as exc:
        st.error(str(exc))
        return None


def builtin_ui(builtin: dict, direction: tuple[str, str], settings: AppSettings) -> EvalSet | None:
    if st.session_state.get("eval_builtin") not in builtin:
        st.session_state["eval_builtin"] = next(iter(builtin))
    name = st.selectbox(f"Test set ({widgets.direction_label(direction)}), from the offered models' training corpora",
                        list(builtin), key="eval_builtin")
    try:
        return load_builtin_set(builtin[name])
    except DataError as exc:  # its message names files on the server
        st.error(hosting.error_text(exc, settings, f"The built-in test set {name} could not be read."))
        return None


@st.cache_data(show_spinner="Reading the test set...", max_entries=8)
def parse_upload(raws: tuple, names: tuple, take_first: bool) -> EvalSet:
    """A validated EvalSet from one table or two line files; parsed once per content."""
    if len(raws) == 1:
        return eval_set_from_table(raws[0], names[0], take_first=take_first)
    return eval_set_from_files(raws[0], raws[1], names[0], names[1], take_first=take_first)


def content_digest(test: EvalSet) -> str:
    joined = "\n".join(test.src) + "\0" + "\n".join(test.ref)
    return hashlib.sha256(joined.encode()).hexdigest()


def decode_all(names: list[str], test: EvalSet, search: SearchConfig, settings: AppSettings,
               ablations: tuple[str, ...] = ()) -> list[ModelRun]:
    """Each model's run (and each attention model's ablated runs, named ``model+ablation``), from
    the shared store when the same content and decoding were seen before; the runs decode side
    by side, each with its own progress bar."""
    for name in names:
        try:
            load_translator(name, settings)
        except UserError as exc:  # CheckpointError: a listed folder that does not load
            st.error(hosting.error_text(exc, settings, f"Checkpoint {name} does not load on this server.",
                                        local=md(f"Cannot use {name}: {exc}")))
            st.stop()
    jobs = [(name, name, search) for name in names] + [
        (f"{name}+{kind}", name, replace(search, ablation=kind)) for name in names
        if _has_attention(name, settings) for kind in ablations]
    bars = [st.progress(0.0, text=f"{label}: starting") for label, _, _ in jobs]
    store = shared_store("evaluations", 32)
    runs = side_by_side([partial(store.get_or_compute, (label, content_digest(test), job_search),
                                 partial(decode_run, name, test, job_search, settings, bar, label))
                         for (label, name, job_search), bar in zip(jobs, bars)])
    for bar in bars:
        bar.empty()
    return runs


def decode_run(name: str, test: EvalSet, search: SearchConfig, settings: AppSettings, bar,
               label: str = "") -> ModelRun:
    """One model's run over ``test``, decoded in batches beside other users' evaluations, each
    waiting its turn at the server's decode limit (``decodes.translate_lines``), with progress and
    decoding progress on ``bar``; named ``label``. Beam trees are dropped (see ``run_model``)."""
    name_shown = label or name
    total, shown = len(test.src), [0.0]

    def progress(done: int) -> None:
        shown[0] = done / total
        bar.progress(shown[0], text=f"{name_shown}: {done}/{total} sentences")

    traces, seconds = decodes.translate_lines(name, test.src, search, settings, progress,
                                              lambda text: bar.progress(shown[0], text=f"{name_shown}: {text}"))
    for trace in traces:
        trace.beam = []
    translator = decodes.load_translator(name, settings)  # loaded already, by decode_all
    # seconds: the decoding time of the batches that held its sentences, not other users' load
    return ModelRun(name_shown, translator.arch, traces, max(seconds, 1e-9))


def results_ui(test: EvalSet, runs: list[ModelRun], search: SearchConfig, pair: str) -> None:
    key = (content_digest(test), tuple(r.name for r in runs), search)  # what the runs depend on
    scores_ui(key, test, runs)
    width = st.slider("Length bucket width (words)", 2, 20, 10, key="eval_width")
    rows = _length_rows(key, width, test, runs)
    widgets.show_chart(length_chart(rows, f"BLEU by source sentence length, {html.escape(test.name)}"),
                       key="eval_length_chart")
    table_ui(test, runs, pair)
    downloads_ui(test, runs, rows)


@st.cache_data(show_spinner="Scoring...", max_entries=64)
def _scores(key: tuple, _test: EvalSet, _runs: list[ModelRun]) -> tuple[list[dict], dict | None]:
    rows = [{"model": r.name, **with_interval(r.hyps, _test.ref), "sentences/s": round(len(_test.src) / r.seconds, 1)}
            for r in _runs]
    return rows, paired_significance(_runs, _test.ref) if len(_runs) >= 2 else None


@st.cache_data(show_spinner=False, max_entries=64)
def _length_rows(key: tuple, width: int, _test: EvalSet, _runs: list[ModelRun]) -> list[dict]:
    return bleu_by_length(_test.src, _test.ref, _runs, width)


def scores_ui(key: tuple, test: EvalSet, runs: list[ModelRun]) -> None:
    rows, paired = _scores(key, test, runs)
    table = pd.DataFrame([{"model": r["model"], "BLEU": r["bleu"], "BLEU 95% ±": r["bleu_ci95"], "chrF": r["chrf"],
                           "chrF 95% ±": r["chrf_ci95"], "BLEU (lowercased)": r["bleu_lc"],
                           "sentences/s": r["sentences/s"]} for r in rows])
    st.dataframe(table, hide_index=True, key="eval_scores")
    st.caption(f"BLEU signature: {rows[0]['bleu_signature']} · chrF signature: {rows[0]['chrf_signature']}")
    if paired:
        other = paired["systems"][1]
        verdict = "significant" if other["p_value"] is not None and other["p_value"] < 0.05 else "not significant"
        st.markdown(f"**Paired bootstrap** ({md(paired['signature'])}): {md(other['name'])} vs "
                    f"{md(paired['baseline'])}, p = {other['p_value']:.4f} ({verdict} at 0.05)")


def table_ui(test: EvalSet, runs: list[ModelRun], pair: str) -> None:
    frame = pd.DataFrame(sentence_rows(test, runs))
    query = st.text_input("Filter sentences (substring of source, reference or outputs)", key="eval_filter")
    if query:
        mask = frame.astype(str).apply(lambda col: col.str.contains(query, case=False, regex=False)).any(axis=1)
        frame = frame[mask]
    event = st.dataframe(frame, hide_index=True, on_select="rerun", selection_mode="single-row", key="eval_table_view")
    selected = [r for r in (event.selection.rows if event and event.selection else []) if r < len(frame)]
    if selected:  # a row click moves the number box (its value lives under its key)
        st.session_state["eval_row"] = int(frame.iloc[selected[0]]["id"])
    row_id = st.number_input("Sentence id to inspect", 0, len(test.src) - 1, key="eval_row")
    drilldown_ui(test, runs, int(row_id), pair)


def drilldown_ui(test: EvalSet, runs: list[ModelRun], i: int, pair: str) -> None:
    st.caption("Source")
    st.text(test.src[i])
    st.caption("Reference")
    st.text(test.ref[i])
    for column, run in zip(st.columns(len(runs)), runs):
        with column:
            trace = run.traces[i]
            st.markdown(f"**{md(run.name)}**")
            st.text(trace.translation)
            if trace.attention is not None:
                widgets.show_chart(alignment_heatmap(trace.attention, trace.source_tokens, trace.target_tokens),
                                   key=f"eval_heatmap_{run.name}")
    if st.button("Open in the Translate page", key="eval_open"):
        names = [r.name for r in runs if r.name.rpartition("+")[2] not in ABLATIONS]  # models, not their ablations
        st.session_state.update(direction=pair, model_left=names[0], model_right=names[-1], source=test.src[i],
                                reference=test.ref[i], reference_for=test.src[i])
        st.switch_page(nav.link("translate"))


def downloads_ui(test: EvalSet, runs: list[ModelRun], rows: list[dict]) -> None:
    columns = st.columns(len(runs) + 2)
    for column, run in zip(columns, runs):
        column.download_button(f"{run.name} hypotheses", "\n".join(run.hyps) + "\n", file_name=f"hyps.{run.name}.txt",
                               key=f"eval_dl_{run.name}")
    columns[-2].download_button("Per-sentence table (CSV)", pd.DataFrame(sentence_rows(test, runs)).to_csv(index=False),
                                file_name="sentences.csv", mime="text/csv", key="eval_dl_csv")
    columns[-1].download_button("Length chart (HTML)", length_chart(rows).to_html(include_plotlyjs="cdn"),
                                file_name="length_chart.html", mime="text/html", key="eval_dl_chart")
    st.caption("PNG/SVG of any chart: the camera icon in its toolbar.")


def stress_ui(test: EvalSet, runs: dict[int, list[ModelRun]]) -> None:
    """BLEU against source length over all joined versions: the paper's Figure 2 on demand."""
    st.subheader("Length stress test")
    rows, summary = stress_report(test, runs)
    widgets.show_chart(length_chart(rows, f"BLEU by source length, k = {', '.join(map(str, runs))} joined lines"),
                       key="eval_stress_chart")
    st.dataframe(pd.DataFrame(summary), hide_index=True, key="eval_stress_table")
