"""Lab page: train RNNencdec and RNNsearch on a toy task in a minute, watch the loss fall and the
attention form, and test the paper's claim (Figure 2) on the experiment: exact match by input
length. Trainings run on the server (viz/serving/lab_trainings.py), queued and shared by
settings; the settings live in the URL, so a teacher's link starts everyone on the same one.
"""
from __future__ import annotations

import uuid
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Optional

import pandas as pd
import streamlit as st

from model.experiments.lab_run import ARCHS, LabSettings
from model.decoding.search import SearchConfig
from model.experiments.tasks import MAX_LENGTH, TASKS, LabError, Lengths, held_out_pairs, make_task, source_text
from viz.figures.heatmap import alignment_matrix
from viz.figures.lines import Line, LinesFigure
from viz.i18n import N_, _, ltr
from viz.pages.parts import nav, widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.serving import hosting, offered_models
from viz.serving.lab_trainings import Job, LabBusy, LabQueue, everyday_file
from viz.serving.settings import REPO
from viz.serving.settings import AppSettings
from viz.serving.shared_cache import shared

MAX_PAGE_SECONDS = 120  # the longest training a page may ask for, per model
MAX_PAGE_UNITS = 128  # the largest hidden size a page may ask for
REFRESH_S = 2.0  # how often a training's charts redraw while it runs
COLOURS = {"rnnsearch": "#1f77b4", "rnnencdec": "#d62728", "transformer": "#2ca02c"}
TASK_HELP = {  # shown through _()
    "reverse": N_("integers 0-49 written backwards: the last input first"),
    "copy": N_("integers 0-49 written again"),
    "sort": N_("integers 0-49 in ascending order"),
    "shift": N_("every integer plus one"),
    "dates": N_("a date in English words into 1958-08-29, letter by letter"),
    "everyday": N_("short English sentences into French (Tatoeba, when the server has it)"),
}
PARAMS = ("task", "arch", "seconds", "updates", "train", "test", "seed", "hidden")  # the view in the URL
UPDATE_CHOICES = (250, 500, 1000, 2000, 4000)  # the page's budgets in updates, per model
SWEEP_SEEDS = 5  # the seeds "Run 5 seeds" trains, from the chosen seed on
SLOW = 0.9  # a model that made fewer than this share of its updates before its seconds ran out: the page says so


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Lab"), url_path="lab", icon=":material/science:")


@shared(max_entries=1)
def lab_queue(slots: int, everyday: Optional[Path], lab_dir: Path) -> LabQueue:
    """The server's one queue of Lab trainings (``everyday``: the Tatoeba file, if any;
    ``lab_dir``: where finished experiments' models are kept for the Translate page)."""
    return LabQueue(slots, everyday_path=everyday, lab_dir=lab_dir)


def session_id() -> str:
    return st.session_state.setdefault("lab_session", uuid.uuid4().hex)


def render(settings: AppSettings) -> None:
    st.title(_("Lab: test the paper's claim yourself"))
    st.caption(_("Train RNNencdec and RNNsearch on a toy task for a minute each, on the same data with the same "
                 "budget, then test them on inputs of every length. The paper says the fixed vector fails on long "
                 "inputs and attention does not: train on short inputs and test on long ones, make the models "
                 "smaller, or turn attention off, and see for yourself."))
    chosen = settings_ui()
    if chosen is None:
        return
    queue = lab_queue(settings.lab_slots, everyday_file(offered_models.offered(settings), REPO), hosting.lab_root(settings))
    with st.container(horizontal=True):  # the two buttons side by side
        one = st.button(_("Train"), type="primary", key="lab_run")
        several = st.button(_("Run {n} seeds").format(n=SWEEP_SEEDS), key="lab_seeds",
                            help=_("Train every model on {n} seeds, one after another, and draw the spread of their "
                                   "results: does the lesson hold for every student, or only on a lucky seed? Takes "
                                   "{n} times as long.").format(n=SWEEP_SEEDS))
    if one or several:
        try:
            job = queue.submit(replace(chosen, seeds=SWEEP_SEEDS) if several else chosen, session_id())
            st.session_state["lab_key"] = job.key
        except LabBusy:
            st.warning(_("Your previous training is still running: stop it or wait for it before starting another."))
    job = queue.jobs.get(st.session_state.get("lab_key", ""))
    if job is None:
        st.info(_("Press Train. Each model trains on one core of the server for the updates chosen, or the "
                  "seconds chosen if they run out first; the page shows the loss and the attention of one input as "
                  "they change."))
        return
    st.session_state["lab_ticking"] = job.active
    st.fragment(progress_view, run_every=REFRESH_S if job.active else None)(queue, job)


def settings_ui() -> LabSettings | None:
    """The experiment's settings, from widgets whose values live in the URL."""
    params = st.query_params
    defaults = LabSettings()
    restore = not st.session_state.get("lab_restored")
    if restore:
        st.session_state["lab_restored"] = True
        view = _from_params(params.to_dict(), defaults)
        st.session_state.update(lab_task=view.task, lab_archs=list(view.archs), lab_seconds=int(view.seconds),
                                lab_updates=int(view.updates),
                                lab_train=view.train_lengths, lab_test=view.test_lengths, lab_seed=view.seed,
                                lab_hidden=view.hidden)
    left, right = st.columns(2)
    with left:
        task = st.selectbox(_("Task"), list(TASKS), key="lab_task",
                            format_func=lambda t: f"{ltr(t)}: {_(TASK_HELP[t])}")
        archs = widgets.multiselect(_("Models"), list(ARCHS), key="lab_archs")
        updates = st.select_slider(_("Updates per model"), UPDATE_CHOICES, key="lab_updates",
                                   help=_("Each model stops after this many updates, or when its seconds run out, "
                                          "whichever comes first: the same updates give the same models."))
        seconds = st.slider(_("Seconds of training per model, at most"), 5, MAX_PAGE_SECONDS, key="lab_seconds")
    with right:
        train = st.text_input(_("Training input lengths"), key="lab_train", help=_("e.g. 1-20"))
        test = st.text_input(_("Test input lengths"), key="lab_test",
                             help=_("longer than the training lengths: does a model extrapolate?"))
        seed = st.number_input(_("Seed"), 0, 10_000, key="lab_seed")
        hidden = st.select_slider(_("Hidden units"), [16, 32, 64, 96, 128], key="lab_hidden")
    chosen = LabSettings(task=task, archs=tuple(archs), seconds=float(seconds), updates=int(updates),
                         train_lengths=str(train), test_lengths=str(test), seed=int(seed), hidden=int(hidden),
                         emb=max(8, int(hidden) // 2))
    _write_params(chosen)
    if not archs:
        st.info(_("Choose at least one model."))
        return None
    try:
        chosen.check()
    except LabError:
        st.warning(_("Lengths must look like 1-20, between 1 and {most}.").format(most=MAX_LENGTH))
        return None
    return chosen


def _from_params(params: dict, defaults: LabSettings) -> LabSettings:
    """The settings a link names; what is missing or unusable keeps its default."""
    values = {}
    if params.get("task") in TASKS:
        values["task"] = params["task"]
    archs = tuple(a for a in str(params.get("arch", "")).split(",") if a in ARCHS)
    if archs and len(set(archs)) == len(archs):
        values["archs"] = archs
    for name, field_name, low, high in (("seconds", "seconds", 5, MAX_PAGE_SECONDS), ("seed", "seed", 0, 10_000),
                                        ("hidden", "hidden", 16, MAX_PAGE_UNITS)):
        try:
            value = int(params.get(name, ""))
            if low <= value <= high and (name != "hidden" or value in (16, 32, 64, 96, 128)):
                values[field_name] = float(value) if name == "seconds" else value
        except ValueError:
            pass
    if str(params.get("updates", "")) in {str(u) for u in UPDATE_CHOICES}:
        values["updates"] = int(params["updates"])
    for name, field_name in (("train", "train_lengths"), ("test", "test_lengths")):
        try:
            values[field_name] = str(Lengths.parse(params[name]))
        except (KeyError, LabError):
            pass
    return replace(defaults, **values)


def _write_params(chosen: LabSettings) -> None:
    """The settings into the URL (the app's own parameters kept)."""
    params = {"task": chosen.task, "arch": ",".join(chosen.archs), "seconds": str(int(chosen.seconds)),
              "updates": str(chosen.updates), "train": chosen.train_lengths, "test": chosen.test_lengths,
              "seed": str(chosen.seed), "hidden": str(chosen.hidden)}
    if {k: st.query_params.get(k) for k in PARAMS} != params:
        st.query_params.from_dict({**params, **widgets.app_params()})


def progress_view(queue: LabQueue, job: Job) -> None:
    """The training's state, loss curves and probe attention (redrawn every ``REFRESH_S`` while it
    runs), then its results."""
    if job.state == "queued":
        st.info(_("Waiting for a free place: number {n} in the queue.").format(n=queue.position(job)))
    elif job.state == "running":
        now = max(job.seed_now, job.settings.seed)
        done = sum(1 for m in job.models.values() if m.seconds and m.seed == now)  # a finished model has its seconds
        st.info(_("Training {arch} ({k} of {n})...").format(arch=ltr(_training_now(job, now)), k=min(done + 1,
                len(job.settings.archs)), n=len(job.settings.archs)))
        if job.settings.seeds > 1:
            st.caption(_("Seed {seed} of {n} (seeds {first}-{last}).").format(
                seed=now - job.settings.seed + 1, n=job.settings.seeds, first=job.settings.seed,
                last=job.settings.seed + job.settings.seeds - 1))
    elif job.state == "failed":
        st.error(_("The training failed: {error}").format(error=job.error))
        return
    if job.active and st.button(_("Stop"), key="lab_stop", help=_("Keep what the models have learnt so far")):
        queue.stop(job)
    curves_ui(job)
    probes_ui(job)
    if job.result is not None:
        results_ui(job)
    if st.session_state.get("lab_ticking") and not job.active:  # ended since the page last ran: stop ticking
        st.session_state["lab_ticking"] = False
        st.rerun()


def _training_now(job: Job, seed: int) -> str:
    for arch in job.settings.archs:
        model = job.models.get(arch)
        if model is None or not model.seconds or model.seed != seed:
            return arch
    return job.settings.archs[-1]


def curves_ui(job: Job) -> None:
    lines = tuple(Line(arch, COLOURS.get(arch, "#7f7f7f"), tuple(p[0] for p in m.curve), tuple(p[1] for p in m.curve))
                  for arch, m in job.models.items() if m.curve)
    if lines:
        chart_ui(LinesFigure(_("Training loss"), _("seconds"), _("loss per token"), lines, from_zero=True),
                 key="lab_curves")


def probes_ui(job: Job) -> None:
    """The attention each model gives the probe input now."""
    shown = [(arch, trace) for arch, trace in job.probes.items() if trace is not None]
    if not shown:
        return
    st.markdown(_("**One held-out input:** {text}").format(text=ltr(job.probe_text)))
    for column, (arch, trace) in zip(st.columns(len(shown)), shown):
        with column:
            decode_ui(arch, trace, f"lab_probe_{arch}")


def decode_ui(arch: str, trace, key: str) -> None:
    """One decode of a Lab model: its output and, with attention, its heatmap."""
    st.text(f"{arch}: {trace.translation}")
    if trace.attention is not None:
        chart_ui(alignment_matrix(trace.attention, trace.source_tokens, trace.target_tokens,
                                  title=_("{arch}: attention").format(arch=arch), grayscale=True), key=key)
    else:
        st.caption(_("{arch} has no attention: it reads the input as one fixed vector.").format(arch=arch))


def results_ui(job: Job) -> None:
    """Exact match by input length for every model (the paper's Figure 2 for this experiment);
    over several seeds, its spread."""
    result = job.result
    if result.settings.seeds > 1 and len(result.by_seed) > 1:
        spread_ui(result)
        if job.state == "stopped":
            st.caption(_("Stopped early: the spread is over the seeds that finished before Stop was pressed."))
        slow_ui(result)
        open_ui(job)  # the first seed's models
        return
    st.subheader(_("Exact match by input length"))
    lines = tuple(Line(arch, COLOURS.get(arch, "#7f7f7f"), tuple(float(n) for n in sorted(m.by_length)),
                       tuple(100 * m.by_length[n].exact for n in sorted(m.by_length)))
                  for arch, m in result.models.items())
    chart_ui(LinesFigure(_("Share of test inputs output exactly right"), _("input length"), "%", lines,
                         subtitle=_("trained on lengths {lengths}").format(lengths=result.settings.train_lengths),
                         from_zero=True), key="lab_by_length")
    rows = [{_("model"): arch, _("updates"): m.updates, _("seconds"): round(m.seconds, 1),
             _("updates a second"): _rate(m), _("ended by"): _(ENDED_BY[m.ended_by]) if m.ended_by in ENDED_BY else "",
             _("exact, training lengths"): _mean_exact(m, result.settings.train_lengths),
             _("exact, all test lengths"): _mean_exact(m, result.settings.test_lengths)}
            for arch, m in result.models.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="lab_table")
    slow_ui(result)
    if job.state == "stopped":
        st.caption(_("Stopped early: these are the models as they were when Stop was pressed."))
    open_ui(job)
    examples_ui(job)


ENDED_BY = {"updates": N_("its updates"), "seconds": N_("its seconds"), "stop": N_("Stop")}  # shown through _()


def spread_ui(result) -> None:
    """Exact match by length over every seed trained: each model's mean, in a band from its worst
    seed to its best; why runs differ; a table of the means per seed."""
    settings, seeds = result.settings, list(result.by_seed)
    st.subheader(_("Exact match by input length, over {n} seeds").format(n=len(seeds)))
    lines = []
    for arch in settings.archs:
        bands = result.spread(arch)
        if bands:
            lengths = sorted(bands)
            lines.append(Line(arch, COLOURS.get(arch, "#7f7f7f"), tuple(float(n) for n in lengths),
                              tuple(100 * bands[n].mean for n in lengths),
                              band=(tuple(100 * bands[n].low for n in lengths),
                                    tuple(100 * bands[n].high for n in lengths))))
    chart_ui(LinesFigure(_("Share of test inputs output exactly right: mean, and worst to best seed"),
                         _("input length"), "%", tuple(lines),
                         subtitle=_("trained on lengths {lengths}, seeds {first}-{last}").format(
                             lengths=settings.train_lengths, first=seeds[0], last=seeds[-1]),
                         from_zero=True), key="lab_spread")
    st.markdown(_("**Why runs differ.** A seed fixes the pairs a model trains on, its first weights and the order "
                  "it sees them in; nothing else changes between these runs. Small models trained for a minute "
                  "land in different places: one seed finds the alignment early, another late. The line is the "
                  "mean over the seeds and the shaded band runs from the worst seed to the best. The paper's claim "
                  "holds for this experiment when RNNsearch's whole band stays above RNNencdec's on the long "
                  "inputs, not when one seed's line does."))
    exact, updates = _("exact, all test lengths"), _("updates")
    rows = [{_("seed"): seed, **{f"{arch}: {exact}": _mean_exact(models[arch], settings.test_lengths)
                                 for arch in settings.archs if arch in models},
             **{f"{arch}: {updates}": models[arch].updates for arch in settings.archs if arch in models}}
            for seed, models in result.by_seed.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="lab_seed_table")


def slow_ui(result) -> None:
    """A line for each model whose seconds ran out well before its updates: this machine is too
    slow for the budget, and its results may be weaker than the documented ones."""
    settings = result.settings
    for models in list(result.by_seed.values())[:1]:
        for arch, m in models.items():
            if m.ended_by == "seconds" and m.updates < SLOW * settings.updates:
                st.warning(_("{arch} made {done} of its {updates} updates in {seconds:.0f} s ({rate} a second): this "
                             "server is too slow for the whole budget in the time chosen, so its results may be "
                             "weaker than on a faster machine. Give it more seconds to see the usual "
                             "result.").format(arch=ltr(arch), done=m.updates, updates=settings.updates,
                                               seconds=m.seconds, rate=_rate(m)))


def _rate(model) -> float:
    return round(model.updates / model.seconds, 1) if model.seconds else 0.0


def open_ui(job: Job) -> None:
    """A link that opens this experiment's models in the Translate page's views."""
    names = [job.saved[arch] for arch in job.settings.archs if arch in job.saved]
    if not names:
        return
    text = job.probe_text or ""
    params = {"lab": job.key, "pair": f"{job.settings.task}-{job.settings.task}", "left": names[0],
              "right": names[1] if len(names) > 1 else names[0], "src": text, **widgets.app_params()}
    st.page_link(nav.link("translate"), label=_("Open these models in the Translate page (heatmap, step by step, "
                                                "beam tree, explanations)"),
                 query_params=params, icon=":material/arrow_forward:")


def examples_ui(job: Job) -> None:
    """Each model's attention on the shortest and the longest test input."""
    result = job.result
    kept = st.session_state.setdefault("lab_examples", {})
    if job.key not in kept:
        kept.clear()  # one experiment's at a time
        kept[job.key] = {arch: m.translator.translate(example_texts(result.settings), SearchConfig(beam=1, topk=1))
                         for arch, m in result.models.items()}
    st.subheader(_("Attention on the shortest and the longest test input"))
    for arch, traces in kept[job.key].items():
        for column, trace in zip(st.columns(len(traces)), traces):
            with column:
                decode_ui(arch, trace, f"lab_example_{arch}_{len(trace.source_tokens)}")


def example_texts(settings: LabSettings) -> list[str]:
    """A held-out input of the shortest and one of the longest test length (as typed text)."""
    if settings.task == "everyday":
        return []
    task, lengths = make_task(settings.task), Lengths.parse(settings.test_lengths)
    made = task.lengths_made(lengths)
    texts = []
    for n in dict.fromkeys((made[0], made[-1])) if made else ():
        pairs = held_out_pairs(task, Lengths(n, n), 1, settings.seed + 200).get(n) or []
        for source, _target in pairs[:1]:
            texts.append(source_text(settings.task, source))
    return texts


def _mean_exact(model, lengths: str) -> float:
    wanted = Lengths.parse(lengths)
    scores = [s.exact for n, s in model.by_length.items() if n in wanted]
    return round(100 * sum(scores) / len(scores), 1) if scores else float("nan")
