"""Models page: each checkpoint's card (architecture, data, training curves, test scores)."""
from __future__ import annotations

from functools import partial

import pandas as pd
import streamlit as st

from model.checkpoints.card_schema import Card
from viz.figures.length_chart import stress_chart
from viz.figures.training_curves import training_curves
from viz.pages import widgets
from viz.pages.safe_text import md
from viz.serving import hosting, offered_models
from viz.serving.offered_models import ModelInfo
from viz.serving.settings import AppSettings

EVERY_PAIR = "every language pair"


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title="Models", url_path="models", icon=":material/model_training:")


def render(settings: AppSettings) -> None:
    st.title("Models")
    st.caption("Each checkpoint's card: what it learned from, how it was trained, and how it scores.")
    models = offered_models.offered(settings)
    if not models:
        st.error(hosting.no_checkpoints_text(settings))
        return
    codes = [widgets.direction_code(d) for d in widgets.directions(models)]
    chosen = st.sidebar.selectbox("Language pair", [EVERY_PAIR, *codes], key="models_direction",
                                  format_func=lambda c: c if c == EVERY_PAIR else
                                  widgets.direction_label(tuple(c.split("-"))))
    models = [m for m in models if chosen in (EVERY_PAIR, widgets.direction_code(m.direction))]
    rows = [row for m in models if m.card for row in _score_rows(m)]
    if rows:
        st.subheader("Test scores")
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="models_scores")
    stress_overview([m for m in models if m.card])
    for model in models:
        with st.expander(f"{model.name} ({widgets.direction_label(model.direction)})", expanded=len(models) <= 3):
            card_ui(model, settings)


def card_ui(model: ModelInfo, settings: AppSettings) -> None:
    if model.card_problem:  # its text may name server paths
        st.error(hosting.error_text(Exception(model.card_problem), settings, f"{model.name}/card.json is malformed.",
                                    local=md(model.card_problem)))
    card = model.card
    st.markdown(f"**Architecture:** {md(model.arch)} · attention {md(model.attention) if model.has_attention else 'none'}"
                + (f" · {card.parameters:,} parameters" if card and card.parameters else ""))
    if model.imported:
        st.markdown(f"**From:** {md(model.description.origin)}. {md(model.description.summary)}")
    if card is None:
        st.caption("No card.json in this checkpoint: nothing is known about its data or training.")
        return
    data_ui(model.name, card)
    training_ui(card)
    for title, value in (("Preprocessing", card.preprocessing), ("Training command", card.command),
                         ("How this copy was trained", card.how_trained)):
        if value:
            st.markdown(f"**{title}:** {md(value)}")
    stress_ui(model.name, card)
    for gold, result in card.alignment.items():
        st.markdown(f"**Word alignment against human links** ({md(gold)}, {result.sentences} sentences; AER, lower "
                    "is better):")
        st.dataframe(pd.DataFrame([{"source": f"{'this model' if r.model else 'baseline'}: {r.method}",
                                    "links": r.extraction, "AER": r.aer, "precision": r.precision,
                                    "recall": r.recall, "sentences": r.sentences} for r in result.rows]),
                     hide_index=True, key=f"alignment_{model.name}_{gold}")
    if card.comparison:
        c = card.comparison
        st.markdown(f"**Against {md(c.other)}** ({md(c.test)}):")
        st.dataframe(pd.DataFrame([{"test set": r.test_set, card.name: r.ours, c.other: r.theirs,
                                    "difference": r.difference, "p": r.p_value} for r in c.rows]),
                     hide_index=True, key=f"comparison_{model.name}")
    if card.log:
        widgets.show_chart(training_curves(card.log, f"{model.name}: training"), key=f"curves_{model.name}")
    for title, value in (("Deviations from the paper", " ".join(card.deviations)), ("Limitations", card.limitations)):
        if value:
            st.markdown(f"**{title}:** " + md(value))


def data_ui(name: str, card: Card) -> None:
    if card.data:
        st.markdown(f"**Data** ({md(card.trained_on)}):")
        st.dataframe(pd.DataFrame([{"corpus": d.name, "description": d.description, "licence": d.licence,
                                    "attribution": d.attribution, "training pairs": d.training_pairs,
                                    "weight": d.weight, "splits": d.splits} for d in card.data]),
                     hide_index=True, key=f"data_{name}")


def training_ui(card: Card) -> None:
    t = card.training
    if t is None:
        return
    host = f" on {t.where.gpu or t.where.cpu}, {t.where.threads} thread(s)" if t.where else ""
    d = card.decoding
    st.markdown(f"**Training:** {t.updates:,} updates ({t.epochs:g} epochs), {t.wall_minutes:g} min{md(host)}; "
                f"best validation BLEU {t.best_val_bleu} (greedy) · **default decoding:** beam {d.beam}, length "
                f"normalisation λ {d.length_norm} ({md(d.chosen_on)})")


def stress_ui(name: str, card: Card) -> None:
    """The card's length stress tests: BLEU against mean source length (k sentences joined)."""
    for test_set, rows in card.length_stress.items():
        widgets.show_chart(stress_chart({name: rows}, f"Length stress test, {test_set} (k sentences joined)"),
                           key=f"stress_{name}_{test_set}")


def stress_overview(models: list[ModelInfo]) -> None:
    """Every model's length stress test on one chart per test set: the paper's Figure 2 effect."""
    by_set: dict[str, dict] = {}
    for model in models:
        for test_set, rows in model.card.length_stress.items():
            by_set.setdefault(test_set, {})[model.name] = rows
    if by_set:
        st.subheader("Length stress tests (BLEU as k test sentences are joined)")
    for test_set, series in by_set.items():
        widgets.show_chart(stress_chart(series, test_set), key=f"stress_all_{test_set}")


def _score_rows(model: ModelInfo) -> list[dict]:
    return [{"model": model.name, "pair": widgets.direction_label(model.direction), "test set": test_set,
             "decoding": s.decoding, "BLEU": s.bleu, "BLEU (lowercased)": s.bleu_lc, "chrF": s.chrf,
             "sentences": s.sentences} for test_set, s in model.card.test_scores.items()]
