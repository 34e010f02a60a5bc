"""What every page shares: finding checkpoints and their cards under this server's rules
(``hosting.py``), cached model loading, and cached, queued translation."""
from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Callable, Hashable, Optional, TypeVar

import streamlit as st
import torch
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from model.checkpoint import CheckpointError, read_card, read_config
from model.config import CorpusSpec
from model.corpora import corpus_specs, load_split, test_split_names
from model.evaluate import TestSet, build_test_set
from model.search import SearchConfig
from model.trace import Trace
from model.translate import MAX_BEAM, Translator

from . import hosting
from .admission import DecodeGate

REPO = Path(__file__).resolve().parents[1]
# Longest typed input the page accepts, in characters; longer text is cut, with a message.
MAX_INPUT_CHARS = 2000
DEFAULT_PAIR = "everyday"  # the card "pair" the app opens with (issue 15)
T = TypeVar("T")


def checkpoint_root() -> Path:
    """Folder with the checkpoints to offer: $NMT_CHECKPOINTS, else the shipped ``checkpoints/``."""
    return Path(os.environ.get("NMT_CHECKPOINTS", REPO / "checkpoints"))


def resolve_checkpoint(name: str) -> Path:
    """The folder ``name`` stands for under this server's rules (``hosting.resolve_checkpoint``)."""
    return hosting.resolve_checkpoint(name, checkpoint_root())


def no_checkpoints_text(hint: str = "") -> str:
    return hosting.no_checkpoints_text(checkpoint_root(), hint)


def list_checkpoints() -> list[str]:
    """Names of sub-folders of the checkpoint root that contain a config.json, sorted; in
    production mode only those resolve_checkpoint accepts (no symlinks out of the root)."""
    root = checkpoint_root()
    if not root.is_dir():
        return []
    names = sorted(p.name for p in root.iterdir() if (p / "config.json").is_file())
    return [name for name in names if _accepted(name)] if hosting.production() else names


def _accepted(name: str) -> bool:
    try:
        return bool(resolve_checkpoint(name))
    except hosting.CheckpointNameError:
        return False


def trained_on(name: str) -> str:
    """What a model learned from, in a few words, from its card (for pickers and captions)."""
    label = card(name).get("trained_on")
    return label if isinstance(label, str) and label else "training data not stated in its card"


def model_label(name: str) -> str:
    return f"{name} · {trained_on(name)}"


def card_decoding(name: str) -> dict:
    """The decoding its card records as the model's default (chosen on validation), checked:
    beam size and length normalisation, else beam 5 and 1.0."""
    decoding = card(name).get("decoding")
    decoding = decoding if isinstance(decoding, dict) else {}
    beam, length_norm = decoding.get("beam"), decoding.get("length_norm")
    return {"beam": beam if isinstance(beam, int) and 1 <= beam <= MAX_BEAM else 5,
            "length_norm": round(float(length_norm), 1) if isinstance(length_norm, (int, float))
            and 0 <= length_norm <= 2 else 1.0}


def default_pair(names: list[str]) -> tuple[str, str]:
    """RNNsearch and RNNencdec of the default pair (cards with ``"pair": DEFAULT_PAIR``) when
    both exist, else the first RNNsearch and RNNencdec by name, else the first two names."""
    preferred = [n for n in names if card(n).get("pair") == DEFAULT_PAIR] or names
    search = [n for n in preferred if card(n).get("arch", "rnnsearch" if "rnnsearch" in n else "") == "rnnsearch"]
    search.sort(key=lambda n: not _additive(n))  # the paper's alignment model first
    encdec = [n for n in preferred if card(n).get("arch", "rnnencdec" if "rnnencdec" in n else "") == "rnnencdec"]
    first = (search or names)[0]
    return first, (encdec or [n for n in names if n != first] or names)[0]


def builtin_test_sets() -> dict[str, tuple[str, str, str, str]]:
    """Test sets of the corpora the offered models were trained on, where they exist on this
    server: {"corpus/split": (corpus name, path, split, column languages)}, plus the test
    files of $NMT_DATA_DIR (app.py's --data-dir) as "data/split"."""
    return _builtin_test_sets(str(checkpoint_root()), tuple(list_checkpoints()), os.environ.get("NMT_DATA_DIR"))


def _additive(name: str) -> bool:
    try:
        return read_config(resolve_checkpoint(name))[0].attention == "additive"
    except (CheckpointError, hosting.CheckpointNameError):
        return False


@st.cache_data(show_spinner=False, ttl=300)
def _builtin_test_sets(root: str, names: tuple, extra: Optional[str]) -> dict[str, tuple[str, str, str, str]]:
    found = {}
    specs = [("data", CorpusSpec("data", extra), "en")] if extra else []
    for name in names:
        try:
            _, train, _ = read_config(resolve_checkpoint(name))
        except (CheckpointError, hosting.CheckpointNameError):
            continue
        if train is not None:
            specs += [(spec.name, spec, train.src_lang) for spec in corpus_specs(train)]
    for label, spec, src_lang in specs:
        path = spec.path if Path(spec.path).is_absolute() else str(REPO / spec.path)
        for split in test_split_names(CorpusSpec(spec.name, path, columns=spec.columns), src_lang):
            found.setdefault(f"{label}/{split}", (spec.name, path, split, spec.columns))
    return found


def load_builtin_test_set(label: str) -> TestSet:
    """One of ``builtin_test_sets``, English -> French, read once per server."""
    return _read_test_set(label, *builtin_test_sets()[label])


@st.cache_data(show_spinner="Reading the test set...", max_entries=8)
def _read_test_set(label: str, name: str, path: str, split: str, columns: str) -> TestSet:
    corpus = load_split(CorpusSpec(name, path, columns=columns), split, "en", "fr")
    return build_test_set(corpus.src, corpus.tgt, label)


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
    except hosting.CheckpointNameError:
        return {}


@st.cache_data(show_spinner=False, max_entries=256)
def _card(path: Path) -> dict:
    try:
        data = read_card(path)
    except CheckpointError:
        return {}
    return data if isinstance(data, dict) else {}


class ResultStore:
    """A process-wide LRU of finished decodes. Results are never mutated once stored, so
    sessions can share them; st.cache_data can't be used where a decode draws progress or
    queue messages (its replay forbids elements created outside the cached function)."""

    def __init__(self, max_entries: int):
        self.max_entries, self._items, self._lock = max_entries, OrderedDict(), threading.Lock()

    def get(self, key: Hashable):
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        return None

    def put(self, key: Hashable, value) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)


@st.cache_resource
def decode_gate() -> DecodeGate:
    """The process's limit on decodes running at once: $NMT_DECODE_SLOTS, else one per core
    (each decode runs on one torch thread; see ``side_by_side``)."""
    return DecodeGate(int(os.environ.get("NMT_DECODE_SLOTS", os.cpu_count() or 1)))


def side_by_side(calls: list[Callable[[], T]]) -> list[T]:
    """The calls' results, run at the same time, one thread each, with one torch thread each.
    On 2 cores a second torch thread barely speeds up one interactive decode (beam 5, one
    sentence: 0.27 s either way), while two decodes side by side finish in the time of one.
    The threads carry this script run's context, so they may update elements the caller made
    (progress bars). The first failure, in call order, is raised."""
    ctx = get_script_run_ctx()

    def run(call):
        add_script_run_ctx(threading.current_thread(), ctx)
        torch.set_num_threads(1)
        return call()

    if len(calls) <= 1:
        return [run(call) for call in calls]
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(run, call) for call in calls]
    return [future.result() for future in futures]


@st.cache_resource
def translations() -> ResultStore:
    return ResultStore(256)  # a trace with its beam tree is up to a few MB at beam 16


class QueuedSlot:
    """A ``slot`` for ``Translator.translate`` and ``run_model``: ``places`` at the decode gate,
    ``notice`` telling the user while queued, and the seconds spent queued added up (so a
    page reports decoding speed, not other users' load)."""

    def __init__(self, notice: Optional[Callable[[str], None]] = None, places: int = 1):
        self.notice, self.places, self.waited = notice, places, 0.0

    @contextlib.contextmanager
    def __call__(self):
        gate = decode_gate()
        report = None if self.notice is None else (lambda n: self.notice(
            f"Queued: {n} request{'s' if n != 1 else ''} ahead of yours; this server decodes {gate.limit} at a time."))
        with gate.slot(report, min(self.places, gate.limit)) as waited:
            self.waited += waited
            yield


def translate(name: str, text: str, settings: dict, prefix: Optional[tuple] = None,
              attend: Optional[tuple] = None) -> tuple[Trace, float]:
    """(trace, decoding seconds) for one sentence (see ``translate_all``); a what-if decode
    forces ``prefix`` tokens or puts step ``attend[0]``'s attention on source piece ``attend[1]``."""
    return translate_all([name], text, settings, prefix, attend)[name]


def translate_all(names: list[str], text: str, settings: dict, prefix: Optional[tuple] = None,
                  attend: Optional[tuple] = None) -> dict[str, tuple[Trace, float]]:
    """{name: (trace, decoding seconds)}: each model decodes the sentence once per (text,
    settings, what-if) and process, the models side by side. While other sessions' decodes
    run, a short "queued" line is shown; a session that queued behind the same request (a class
    opening the page at once) gets its result. A broken checkpoint raises its CheckpointError."""
    keys = {name: (name, text, tuple(sorted(settings.items())), prefix, attend) for name in names}
    translators = {name: load_translator(name) for name in names}  # load errors name their model
    results = {name: translations().get(keys[name]) for name in names}
    if None in results.values():
        waiting = st.empty()
        with QueuedSlot(waiting.info, places=list(results.values()).count(None))():
            waiting.empty()
            results = {name: found or translations().get(keys[name]) for name, found in results.items()}
            missing = [name for name, found in results.items() if found is None]
            calls = [partial(_decode, translators[name], text, settings, prefix, attend) for name in missing]
            for name, result in zip(missing, side_by_side(calls)):
                translations().put(keys[name], result)
                results[name] = result
    return results


def _decode(translator: Translator, text: str, settings: dict, prefix, attend) -> tuple[Trace, float]:
    start = time.perf_counter()
    trace = translator.translate([text], SearchConfig(**settings), prefixes=None if prefix is None else [list(prefix)],
                                 attend=None if attend is None else dict([attend]))[0]
    return trace, time.perf_counter() - start


def search_settings_ui(prefix: str = "") -> dict:
    """Sidebar widgets for decoding; returns SearchConfig fields as a dict. Their values live
    under ``prefix``-ed keys for the whole session (a page may seed them first)."""
    st.sidebar.subheader("Decoding")
    for name, default in (("beam", 5), ("lp", 1.0), ("max_len", 2.0), ("forbid_unk", False), ("topk", 5)):
        st.session_state.setdefault(prefix + name, default)
    keep = {"persist_state": "session"}
    beam = st.sidebar.slider("Beam size", 1, MAX_BEAM, key=f"{prefix}beam", **keep)
    length_norm = st.sidebar.slider("Length normalisation λ", 0.0, 2.0, step=0.1, key=f"{prefix}lp", **keep,
                                    help="Hypotheses are ranked by log p / length^λ; 0 ranks by log p alone, "
                                         "which favours short outputs.")
    ratio = st.sidebar.slider("Max output length (× source length)", 0.5, 3.0, step=0.1, key=f"{prefix}max_len",
                              help="plus 10 tokens; the paper's code stopped at 3×", **keep)
    forbid_unk = st.sidebar.checkbox("Forbid <unk>", key=f"{prefix}forbid_unk", **keep)
    topk = st.sidebar.slider("Top-k candidates shown", 2, 10, key=f"{prefix}topk", **keep)
    return asdict(SearchConfig(beam=beam, length_norm=length_norm, max_len_ratio=ratio, forbid_unk=forbid_unk,
                               topk=topk))


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
    dropped; (text, message or None): the message says what was dropped or cut."""
    cleaned = "".join(map(_clean_char, text))
    notes = []
    dropped = sum(not ch.isprintable() and not ch.isspace() for ch in text)
    if dropped:
        notes.append(f"{dropped:,} control or invisible character{'s' if dropped != 1 else ''} (such as NUL) "
                     f"{'were' if dropped != 1 else 'was'} removed.")
    if len(cleaned) > MAX_INPUT_CHARS:
        notes.append(f"Input was {len(cleaned):,} characters; only the first {MAX_INPUT_CHARS:,} are translated.")
        cleaned = cleaned[:MAX_INPUT_CHARS]
    return cleaned, " ".join(notes) or None
