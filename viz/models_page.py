"""Models page: each checkpoint's card (architecture, data, training curves, test scores)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from model.checkpoint import CheckpointError, read_config

from . import common, hosting
from .curves import training_curves


def page() -> st.Page:
    return st.Page(render, title="Models", url_path="models", icon=":material/model_training:")


def render() -> None:
    names = common.list_checkpoints()
    if not names:
        st.error(common.no_checkpoints_text())
        return
    scores = [_score_rows(name, common.card(name)) for name in names]  # malformed cards give no rows
    rows = [row for group in scores for row in group]
    if rows:
        st.subheader("Test scores")
        st.dataframe(pd.DataFrame(rows), hide_index=True, key="models_scores")
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
                f"vocab {model_cfg.src_vocab_size}/{model_cfg.tgt_vocab_size}")
    if card.get("parameters"):
        st.markdown(f"**Parameters:** {card['parameters']:,}")
    for key in ("data", "preprocessing", "command", "limitations"):
        if card.get(key):
            st.markdown(f"**{key.capitalize()}:** {common.md(card[key])}")
    if card.get("log"):
        st.plotly_chart(training_curves(card["log"], f"{name}: training"), key=f"curves_{name}")
    elif train_cfg is None:
        st.caption("No training log in this checkpoint's card.json.")


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
