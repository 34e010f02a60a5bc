"""What every page shares: finding checkpoints, cached model loading, cached translation."""
from __future__ import annotations

import os
import time
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import streamlit as st

from model.checkpoint import CheckpointError, read_card
from model.search import SearchConfig
from model.trace import Trace
from model.translate import MAX_BEAM, Translator

REPO = Path(__file__).resolve().parents[1]
# Longest typed input the page accepts, in characters; longer text is cut, with a message.
MAX_INPUT_CHARS = 2000


def checkpoint_root() -> Path:
    """Folder with the checkpoints to offer: $NMT_CHECKPOINTS, else the shipped ``checkpoints/``."""
    return Path(os.environ.get("NMT_CHECKPOINTS", REPO / "checkpoints"))


def list_checkpoints() -> list[str]:
    """Names of sub-folders of the checkpoint root that contain a config.json, sorted."""
    root = checkpoint_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())


def default_pair(names: list[str]) -> tuple[str, str]:
    """RNNsearch first and RNNencdec second when both exist, else the first two names."""
    search = [n for n in names if "rnnsearch" in n] or names
    encdec = [n for n in names if "rnnencdec" in n] or names[1:] or names
    return search[0], encdec[0]


@st.cache_resource(show_spinner="Loading model...", max_entries=16)
def load_translator(name: str) -> Translator:
    """One shared, read-only Translator per checkpoint and process. ``name`` is a folder under
    the checkpoint root, or an absolute path to any checkpoint folder."""
    return Translator.from_checkpoint(checkpoint_root() / name)


@st.cache_data(show_spinner=False, max_entries=256)
def card(name: str) -> dict:
    try:
        return read_card(checkpoint_root() / name)
    except CheckpointError:
        return {}


@st.cache_data(show_spinner=False, max_entries=512)
def translate(name: str, text: str, settings: dict, prefix: Optional[tuple] = None,
              attend: Optional[tuple] = None) -> tuple[Trace, float]:
    """(trace, seconds) for one sentence; cached per (checkpoint, text, settings, what-if)."""
    translator = load_translator(name)
    start = time.perf_counter()
    trace = translator.translate([text], SearchConfig(**settings), prefixes=None if prefix is None else [list(prefix)],
                                 attend=None if attend is None else dict([attend]))[0]
    return trace, time.perf_counter() - start


def search_settings_ui(prefix: str = "") -> dict:
    """Sidebar widgets for decoding; returns SearchConfig fields as a dict."""
    st.sidebar.subheader("Decoding")
    beam = st.sidebar.slider("Beam size", 1, MAX_BEAM, 5, key=f"{prefix}beam")
    alpha = st.sidebar.slider("Length normalisation α", 0.0, 2.0, 1.0, 0.1, key=f"{prefix}alpha",
                              help="score = log p / length^α; 0 turns normalisation off")
    ratio = st.sidebar.slider("Max output length (× source length)", 0.5, 3.0, 2.0, 0.1, key=f"{prefix}max_len",
                              help="plus 10 tokens; the paper's code stopped at 3×")
    forbid_unk = st.sidebar.checkbox("Forbid <unk>", value=False, key=f"{prefix}forbid_unk")
    topk = st.sidebar.slider("Top-k candidates shown", 2, 10, 5, key=f"{prefix}topk")
    return asdict(SearchConfig(beam=beam, alpha=alpha, max_len_ratio=ratio, forbid_unk=forbid_unk, topk=topk))


MARKDOWN_SPECIAL = set("\\`*_{}[]()#+-.!|$~<>&:")


def md(text: str) -> str:
    """``text`` safe inside st.markdown: each markdown / HTML special character backslash-escaped,
    so uploaded or typed text can never become a link, an image, math or markup."""
    return "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in str(text))


def _clean_char(ch: str) -> str:
    if ch.isprintable() or ch == "\t":
        return ch
    # line breaks keep words apart; NUL, other controls, format characters and lone surrogates
    # go (SentencePiece raises a RuntimeError on a surrogate, and reads NUL as <unk>)
    return " " if ch.isspace() else ""


def cut_input(text: str) -> tuple[str, Optional[str]]:
    """Text cut to MAX_INPUT_CHARS, line breaks made spaces, other non-printable characters
    dropped; (text, message or None)."""
    cleaned = "".join(map(_clean_char, text))
    if len(cleaned) > MAX_INPUT_CHARS:
        return cleaned[:MAX_INPUT_CHARS], (f"Input was {len(cleaned):,} characters; only the first "
                                           f"{MAX_INPUT_CHARS:,} are translated.")
    return cleaned, None
