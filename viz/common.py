"""What every page shares: finding checkpoints, cached model loading, cached translation, and
what production mode (a server others can reach) refuses or keeps to itself."""
from __future__ import annotations

import ipaddress
import os
import sys
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


# Longest checkpoint name or path accepted, in characters, and longest part of it in UTF-8
# bytes (NAME_MAX on Linux/macOS; a longer part makes every file call raise OSError).
MAX_NAME_CHARS, MAX_PART_BYTES = 1024, 255
OUTSIDE_ROOT = "Only checkpoints inside the server's checkpoint folder can be used."
BAD_NAME = "That is not a usable checkpoint name or path."


class CheckpointNameError(ValueError):
    """A checkpoint name refused before anything was loaded. The message is fixed: it never
    repeats the name or any server path."""


def production() -> bool:
    """True when the app may serve people other than whoever started it: ``app.py --production``
    (which sets NMT_PRODUCTION=1), or Streamlit's ``server.address`` set to an address that is not
    loopback (``--server.address 0.0.0.0``).

    Streamlit also listens on every interface when server.address is left unset, which cannot be
    told apart from a local run: start a server that others can reach with --production.
    """
    if os.environ.get("NMT_PRODUCTION", "") not in ("", "0"):
        return True
    address = st.get_option("server.address")
    return bool(address) and not _is_loopback(str(address))


def _is_loopback(address: str) -> bool:
    if address.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:  # a host name or a unix socket: assume others can reach it
        return False


def checkpoint_root() -> Path:
    """Folder with the checkpoints to offer: $NMT_CHECKPOINTS, else the shipped ``checkpoints/``."""
    return Path(os.environ.get("NMT_CHECKPOINTS", REPO / "checkpoints"))


def resolve_checkpoint(name: str) -> Path:
    """The folder that ``name`` (as listed, or typed on the Evaluate page) stands for.

    Locally: a folder under the checkpoint root, or any path (``~`` expanded), so users can point
    at their own runs. In production mode only a folder strictly inside the checkpoint root, after
    resolving ``..`` and symlinks, so a remote user cannot make the server load or probe anything
    else. Empty, over-long or non-printable names (NUL bytes, lone surrogates) are always refused.
    Raises CheckpointNameError.
    """
    if (not name or len(name) > MAX_NAME_CHARS or not name.isprintable()
            or any(len(part.encode()) > MAX_PART_BYTES for part in Path(name).parts)):
        raise CheckpointNameError(BAD_NAME)
    root = checkpoint_root()
    try:
        if not production():
            return root / Path(name).expanduser()
        real_root, path = root.resolve(), (root / name).resolve()
        inside = real_root in path.parents and path.is_dir()
    except (OSError, RuntimeError):  # no home folder, a symlink loop
        raise CheckpointNameError(BAD_NAME) from None
    if not inside:
        raise CheckpointNameError(OUTSIDE_ROOT)
    return path


def error_text(exc: Exception, public: str, local: Optional[str] = None) -> str:
    """What a page shows for ``exc``: ``local`` (default: the exception's text) when run locally;
    in production mode ``public``, which must name no server path, while the details go to the
    server's log."""
    if not production():
        return str(exc) if local is None else local
    print(f"{public} ({type(exc).__name__}: {str(exc)[:500]!r})", file=sys.stderr, flush=True)
    return public


def no_checkpoints_text(hint: str = "") -> str:
    """The error for an empty checkpoint root; the root's path and ``hint`` only locally."""
    if production():
        return "No checkpoints are installed on this server."
    return f"No checkpoints found in {checkpoint_root()}.{' ' + hint if hint else ''}"


def list_checkpoints() -> list[str]:
    """Names of sub-folders of the checkpoint root that contain a config.json, sorted; in
    production mode only those resolve_checkpoint accepts (no symlinks out of the root)."""
    root = checkpoint_root()
    if not root.is_dir():
        return []
    names = sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
    return [name for name in names if _accepted(name)] if production() else names


def _accepted(name: str) -> bool:
    try:
        return bool(resolve_checkpoint(name))
    except CheckpointNameError:
        return False


def default_pair(names: list[str]) -> tuple[str, str]:
    """RNNsearch first and RNNencdec second when both exist, else the first two names."""
    search = [n for n in names if "rnnsearch" in n] or names
    encdec = [n for n in names if "rnnencdec" in n] or names[1:] or names
    return search[0], encdec[0]


def load_translator(name: str) -> Translator:
    """The shared Translator for ``name`` (see resolve_checkpoint). The name is checked on every
    call, before the cache, so a path accepted once can never be served from it unchecked."""
    return _load_translator(resolve_checkpoint(name))


@st.cache_resource(show_spinner="Loading model...", max_entries=16)
def _load_translator(path: Path) -> Translator:
    """One shared, read-only Translator per checkpoint folder and process."""
    return Translator.from_checkpoint(path)


def card(name: str) -> dict:
    """The checkpoint's card.json, or {} when it has none or ``name`` is refused."""
    try:
        return _card(resolve_checkpoint(name))
    except CheckpointNameError:
        return {}


@st.cache_data(show_spinner=False, max_entries=256)
def _card(path: Path) -> dict:
    try:
        return read_card(path)
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
