"""Models page: each checkpoint's card (architecture, data, training curves, test scores)."""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from model.cards.schema import Card
from viz.figures.length_chart import stress_lines
from viz.figures.training_curves import training_panels
from viz.pages.parts import widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, error_text, ltr
from viz.pages.parts.safe_text import md
from viz.serving import hosting, offered_models
from viz.serving.offered_models import ModelInfo
from viz.serving.settings import AppSettings

EVERY_PAIR = N_("every language pair")  # the picker's value; shown through _()


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Models"), url_path="models", icon=":material/model_training:")


def render(settings: AppSettings) -> None:
    st.title(_("Models"))
    st.caption(_("Each checkpoint's card: what it learned from, how it was trained, and how it scores."))
    models = offered_models.offered(settings)
    if not models:
        st.error(hosting.no_checkpoints_text(settings))
        return
    codes = [widgets.direction_code(d) for d in widgets.directions(models)]
    shown = {EVERY_PAIR: _(EVERY_PAIR), **{c: widgets.direction_label(tuple(c.split("-"))) for c in codes}}
    chosen = st.sidebar.selectbox(_("Language pair"), list(shown), key="models_direction", format_func=shown.get)
    models = [m for m in models if chosen in (EVERY_PAIR, widgets.direction_code(m.direction))]
    rows = [row for m in models if m.card for row in _score_rows(m)]
    if rows:
        st.subheader(_("Test scores"))
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="models_scores")
    stress_overview([m for m in models if m.card])
    for model in models:
        with st.expander(f"{ltr(model.name)} ({widgets.direction_label(model.direction)})", expanded=len(models) <= 3):
            card_ui(model, settings)


def card_ui(model: ModelInfo, settings: AppSettings) -> None:
    if model.card_problem is not None:  # its text may name server paths
        st.error(hosting.error_text(model.card_problem, settings,
                                    _("{path} is malformed.").format(path=ltr(f"{model.name}/card.json")),
                                    local=md(error_text(model.card_problem))))
    card = model.card
    attention = ltr(md(model.attention)) if model.has_attention else _("none")
    st.markdown(_("**Architecture:** {arch} · attention {attention}").format(arch=ltr(md(model.arch)),
                                                                            attention=attention)
                + (" · " + _("{n:,} parameters").format(n=card.parameters) if card and card.parameters else ""))
    if model.imported:
        st.markdown(_("**From:** {origin}. {summary}").format(origin=ltr(md(model.description.origin)),
                                                             summary=ltr(md(model.description.summary))))
    if card is not None and card.licence:
        st.markdown(_("**Licence:** {licence}").format(licence=ltr(md(card.licence))))
    if card is None:
        st.caption(_("No card.json in this checkpoint: nothing is known about its data or training."))
        return
    data_ui(model.name, card)
    training_ui(card)
    for title, value in ((_("Preprocessing"), card.preprocessing), (_("Training command"), card.command),
                         (_("How this copy was trained"), card.how_trained)):
        if value:
            st.markdown(f"**{title}:** {ltr(md(value))}")
    stress_ui(model.name, card)
    for gold, result in card.alignment.items():
        st.markdown(_("**Word alignment against human links** ({gold}, {n} sentences; AER, lower is better):").format(
            gold=ltr(md(gold)), n=result.sentences))
        st.dataframe(pd.DataFrame([{_("source"): (_("this model: {method}") if r.model else _("baseline: {method}"))
                                    .format(method=r.method),
                                    _("links"): r.extraction, "AER": r.aer, _("precision"): r.precision,
                                    _("recall"): r.recall, _("sentences"): r.sentences} for r in result.rows]),
                     hide_index=True, key=f"alignment_{model.name}_{gold}")
    if card.comparison:
        c = card.comparison
        st.markdown(_("**Against {other}** ({test}):").format(other=ltr(md(c.other)), test=ltr(md(c.test))))
        st.dataframe(pd.DataFrame([{_("test set"): r.test_set, card.name: r.ours, c.other: r.theirs,
                                    _("difference"): r.difference, "p": r.p_value} for r in c.rows]),
                     hide_index=True, key=f"comparison_{model.name}")
    if card.log:
        for panel, which in zip(training_panels(card.log, _("{name}: training").format(name=model.name)),
                                ("loss", "bleu")):
            chart_ui(panel, key=f"curves_{which}_{model.name}")
    for title, value in ((_("Deviations from the paper"), " ".join(card.deviations)),
                         (_("Limitations"), card.limitations)):
        if value:
            st.markdown(f"**{title}:** " + ltr(md(value)))


def data_ui(name: str, card: Card) -> None:
    if card.data:
        st.markdown(_("**Data** ({trained_on}):").format(trained_on=ltr(md(card.trained_on))))
        st.dataframe(pd.DataFrame([{_("corpus"): d.name, _("description"): d.description, _("licence"): d.licence,
                                    _("attribution"): d.attribution, _("training pairs"): d.training_pairs,
                                    _("weight"): d.weight, _("splits"): d.splits} for d in card.data]),
                     hide_index=True, key=f"data_{name}")


def training_ui(card: Card) -> None:
    t = card.training
    if t is None:
        return
    d = card.decoding
    if t.where:
        text = _("**Training:** {updates:,} updates ({epochs:g} epochs), {minutes:g} min on {where}, {threads} "
                 "thread(s); best validation BLEU {bleu} (greedy) · **default decoding:** beam {beam}, length "
                 "normalisation λ {length_norm} ({chosen_on})")
    else:
        text = _("**Training:** {updates:,} updates ({epochs:g} epochs), {minutes:g} min; best validation BLEU {bleu} "
                 "(greedy) · **default decoding:** beam {beam}, length normalisation λ {length_norm} ({chosen_on})")
    where = ltr(md(t.where.gpu or t.where.cpu)) if t.where else ""
    threads = md(str(t.where.threads)) if t.where else ""
    st.markdown(text.format(updates=t.updates, epochs=t.epochs, minutes=t.wall_minutes, where=where, threads=threads,
                            bleu=t.best_val_bleu, beam=d.beam, length_norm=d.length_norm,
                            chosen_on=ltr(md(d.chosen_on))))


def stress_ui(name: str, card: Card) -> None:
    """The card's length stress tests: BLEU against mean source length (k sentences joined)."""
    for test_set, rows in card.length_stress.items():
        chart_ui(stress_lines({name: rows}, _("Length stress test, {test_set} (k sentences joined)")
                              .format(test_set=test_set)), key=f"stress_{name}_{test_set}")


def stress_overview(models: list[ModelInfo]) -> None:
    """Every model's length stress test on one chart per test set: the paper's Figure 2 effect."""
    by_set: dict[str, dict] = {}
    for model in models:
        for test_set, rows in model.card.length_stress.items():
            by_set.setdefault(test_set, {})[model.name] = rows
    if by_set:
        st.subheader(_("Length stress tests (BLEU as k test sentences are joined)"))
    for test_set, series in by_set.items():
        chart_ui(stress_lines(series, test_set), key=f"stress_all_{test_set}")


def _score_rows(model: ModelInfo) -> list[dict]:
    return [{_("model"): model.name, _("pair"): widgets.direction_label(model.direction), _("test set"): test_set,
             _("decoding"): s.decoding, "BLEU": s.bleu, _("BLEU (lowercased)"): s.bleu_lc, "chrF": s.chrf,
             _("sentences"): s.sentences} for test_set, s in model.card.test_scores.items()]
