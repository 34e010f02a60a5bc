"""Widgets more than one page draws, and the one way a page shows a chart (``show_chart``)."""
from __future__ import annotations

import streamlit as st

from model.corpus.licences import LANGUAGES
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM
from viz.figures.download_config import DEFAULT_FORMAT, FORMATS, PARAM, parse_format, plotly_config
from viz.serving.offered_models import DEFAULT_DIRECTION, ModelInfo

DEFAULTS = SearchConfig()


def search_settings_ui(prefix: str = "") -> SearchConfig:
    """Sidebar widgets for decoding; returns their SearchConfig. Their values live under
    ``prefix``-ed keys for the whole session (a page may seed them first); unset ones start
    at SearchConfig's defaults."""
    st.sidebar.subheader("Decoding")
    for name, default in (("beam", DEFAULTS.beam), ("lp", DEFAULTS.length_norm), ("max_len", DEFAULTS.max_len_ratio),
                          ("forbid_unk", DEFAULTS.forbid_unk), ("topk", DEFAULTS.topk)):
        st.session_state.setdefault(prefix + name, default)
    keep = {"persist_state": "session"}
    beam = st.sidebar.slider("Beam size", 1, MAX_BEAM, key=f"{prefix}beam", **keep)
    length_norm = st.sidebar.slider("Length normalisation λ", 0.0, 2.0, step=0.1, key=f"{prefix}lp", **keep,
                                    help="Hypotheses are ranked by log p / length^λ; 0 ranks by log p alone, "
                                         "which favours short outputs.")
    ratio = st.sidebar.slider("Max output length (× source length)", 0.5, 3.0, step=0.1, key=f"{prefix}max_len",
                              help=f"plus {DEFAULTS.max_len_extra} tokens; the paper's code stopped at 3×", **keep)
    forbid_unk = st.sidebar.checkbox("Forbid <unk>", key=f"{prefix}forbid_unk", **keep)
    topk = st.sidebar.slider("Top-k candidates shown", 2, 10, key=f"{prefix}topk", **keep)
    return SearchConfig(beam=beam, length_norm=round(length_norm, 1), max_len_ratio=round(ratio, 1),
                        forbid_unk=forbid_unk, topk=topk)


def direction_code(direction: tuple[str, str]) -> str:
    """("en", "fr") -> "en-fr", as links write it."""
    return "-".join(direction)


def direction_label(direction: tuple[str, str]) -> str:
    """("en", "fr") -> "English → French"."""
    return " → ".join(LANGUAGES.get(lang, lang) for lang in direction)


def directions(models: list[ModelInfo]) -> list[tuple[str, str]]:
    """The language directions of ``models``: the app's default first, then by name."""
    found = sorted({m.direction for m in models})
    return sorted(found, key=lambda d: d != DEFAULT_DIRECTION)


def direction_ui(codes: list[str], key: str = "direction", on_change=None) -> str:
    """The language direction whose models a page offers (sidebar), as a code such as "en-fr";
    its value lives under ``key``."""
    st.sidebar.subheader("Language pair")
    return st.sidebar.selectbox("Translate from → to", codes, key=key, on_change=on_change,
                                format_func=lambda code: direction_label(tuple(code.split("-"))),
                                label_visibility="collapsed", persist_state="session")


def chart_format_ui() -> str:
    """The format the camera button on every chart downloads, "png" or "svg" (sidebar; app.py
    draws it once for every page). A session starts with the URL's ``chart_format`` (an unknown
    value means PNG), and the URL then follows the choice."""
    state, url = st.session_state, st.query_params
    if PARAM not in state:
        state[PARAM] = parse_format(url.get(PARAM))
    fmt = st.sidebar.radio("Chart downloads", FORMATS, key=PARAM, format_func=str.upper, horizontal=True,
                           help="The camera button on each chart (top right, shown on hover) downloads the "
                                "chart in this format: PNG for documents and slides, SVG to scale or edit.")
    wanted = chart_format_params().get(PARAM)
    if url.get(PARAM) != wanted:  # set only on a change: each write sends the browser a new URL
        if wanted:
            url[PARAM] = wanted
        else:
            del url[PARAM]
    return fmt


def chart_format_params() -> dict[str, str]:
    """The URL parameter for the chosen chart format, none for the default so links stay short
    (a page that rewrites the whole URL adds these)."""
    fmt = parse_format(st.session_state.get(PARAM))
    return {} if fmt == DEFAULT_FORMAT else {PARAM: fmt}


def show_chart(fig, key: str, **kwargs):
    """``st.plotly_chart(fig, key=key, **kwargs)`` with the camera button downloading the chosen
    format, in a file named after ``key``; returns what st.plotly_chart returns (the selection,
    with ``on_select``)."""
    config = plotly_config(parse_format(st.session_state.get(PARAM)), key)
    return st.plotly_chart(fig, key=key, config=config, **kwargs)
