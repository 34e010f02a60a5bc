"""Models page: each checkpoint's card (architecture, data, training curves, test scores)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from model.checkpoint import CheckpointError, card_length_stress, read_config

from . import common, hosting
from .curves import training_curves
from .length_chart import stress_chart


def page() -> st.Page:
    return st.Page(render, title="Models", url_path="models", icon=":material/model_training:")


def render() -> None:
    st.title("Models")
    st.caption("Each shipped checkpoint's card: what it learned from, how it was trained, and how it scores.")
    names = common.list_checkpoints()
    if not names:
        st.error(common.no_checkpoints_text())
        return
    scores = [_score_rows(name, common.card(name)) for name in names]  # malformed cards give no rows
    rows = [row for group in scores for row in group]
    if rows:
        st.subheader("Test scores")
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="models_scores")
    try:
        stress_overview(names)
    except (TypeError, KeyError, ValueError, AttributeError) as exc:  # a malformed length_stress in some card
        st.error(f"A card's length stress test is malformed ({type(exc).__name__}); the overview is left out.")
    for name in names:
        with st.expander(name, expanded=len(names) <= 3):
            try:
                card_ui(name)
            except (TypeError, KeyError, ValueError, AttributeError) as exc:  # a malformed card.json
                st.error(f"{name}/card.json is malformed ({type(exc).__name__}); showing nothing from it.")


def card_ui(name: str) -> None:
    try:
        model_cfg, train_cfg, _ = read_config(common.resolve_checkpoint(name))
    except (CheckpointError, hosting.CheckpointNameError) as exc:  # its text names server paths
        st.error(hosting.error_text(exc, f"{name}: config.json cannot be read on this server."))
        return
    card = common.card(name)
    st.markdown(f"**Architecture:** {model_cfg.arch} · embeddings {model_cfg.emb_dim} · "
                f"GRU {model_cfg.hidden} · alignment {model_cfg.align_dim} · maxout {model_cfg.maxout} · "
                f"vocab {model_cfg.src_vocab_size}/{model_cfg.tgt_vocab_size}"
                + (f" · {card['parameters']:,} parameters" if card.get("parameters") else ""))
    data_ui(name, card)
    training_ui(card)
    for key in ("preprocessing", "command"):
        if card.get(key):
            st.markdown(f"**{key.capitalize()}:** {common.md(card[key])}")
    stress_ui(name, card)
    comparison = card.get("comparison")
    if comparison:
        st.markdown(f"**Against {common.md(comparison['with'])}** ({common.md(comparison['test'])}):")
        st.dataframe(pd.DataFrame(comparison["rows"]).drop(columns=["signature"], errors="ignore"), hide_index=True,
                     key=f"comparison_{name}")
    if card.get("log"):
        st.plotly_chart(training_curves(card["log"], f"{name}: training"), key=f"curves_{name}")
    elif train_cfg is None:
        st.caption("No training log in this checkpoint's card.json.")
    for key, title in (("deviations", "Deviations from the paper"), ("limitations", "Limitations")):
        value = card.get(key)
        if value:
            st.markdown(f"**{title}:** " + common.md(" ".join(value) if isinstance(value, list) else value))


def data_ui(name: str, card: dict) -> None:
    data = card.get("data")
    if isinstance(data, str):  # cards before the corpus mixtures: one sentence
        st.markdown(f"**Data:** {common.md(data)}")
    elif isinstance(data, list) and data:
        st.markdown(f"**Data** ({common.md(card.get('trained_on', ''))}):")
        st.dataframe(pd.DataFrame(data), hide_index=True, key=f"data_{name}")


def training_ui(card: dict) -> None:
    t = card.get("training") or {}
    if not t:
        return
    where = t.get("where") or {}
    host = f" on {where.get('gpu') or where.get('cpu')}, {where.get('threads')} thread(s)" if where else ""
    decoding = card.get("decoding") or {}
    st.markdown(f"**Training:** {t.get('updates', '?')} updates ({t.get('epochs')} epochs), {t.get('wall_minutes')} "
                f"min{common.md(host)}; best validation BLEU {t.get('best_val_bleu')} (greedy)" +
                (f" · **default decoding:** beam {decoding['beam']}, length normalisation λ {decoding['length_norm']}"
                 f" ({common.md(decoding.get('chosen_on', ''))})" if "beam" in decoding else ""))


def stress_ui(name: str, card: dict) -> None:
    """The card's length stress tests: BLEU against mean source length (k sentences joined)."""
    for test_set, rows in card_length_stress(card).items():
        st.plotly_chart(stress_chart({name: rows}, f"Length stress test, {test_set} (k sentences joined)"),
                        key=f"stress_{name}_{test_set}")


def stress_overview(names: list[str]) -> None:
    """Every model's length stress test on one chart per test set: the paper's Figure 2 effect."""
    by_set: dict[str, dict] = {}
    for name in names:
        for test_set, rows in card_length_stress(common.card(name)).items():
            by_set.setdefault(test_set, {})[name] = rows
    if by_set:
        st.subheader("Length stress tests (BLEU as k test sentences are joined)")
    for test_set, series in by_set.items():
        st.plotly_chart(stress_chart(series, test_set), key=f"stress_all_{test_set}")


def _score_rows(name: str, card: dict) -> list[dict]:
    rows = []
    test_scores = card.get("test_scores")
    for test_set, scores in (test_scores.items() if isinstance(test_scores, dict) else []):
        if not isinstance(scores, dict):
            continue
        rows.append({"model": name, "test set": test_set, "decoding": scores.get("decoding"), "BLEU": scores.get("bleu"),
                     "BLEU (lowercased)": scores.get("bleu_lc"), "chrF": scores.get("chrf"),
                     "sentences": scores.get("sentences")})
    return rows
