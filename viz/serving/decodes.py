"""Decoding for the pages: shared models, a queue in front of the CPU, and shared results.

Every page decodes through here. Models load once per process (``load_translator``); at most
``decode_gate().limit`` decodes run at once and the rest wait in line, told so
(``QueuedSlot``); several models decode side by side, one torch thread each
(``side_by_side``); and a finished decode is kept for every session (``translate_all``).
"""
from __future__ import annotations

import contextlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Optional, TypeVar

import streamlit as st
import torch
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from model.decoding.search import SearchConfig
from model.decoding.trace import Trace
from model.decoding.translator import Translator
from viz.serving.admission import DecodeGate
from viz.serving.offered_models import resolve_checkpoint
from viz.serving.shared_results import ResultStore

T = TypeVar("T")


@dataclass(frozen=True)
class Decoded:
    """One model's decode of one sentence, with what the views need to read it."""

    trace: Trace
    seconds: float  # decoding time, without time spent queued
    translator: Translator  # the shared, read-only model and vocabularies that produced it

    @property
    def name(self) -> str:
        return self.translator.name


def load_translator(name: str) -> Translator:
    """The shared Translator for ``name`` (see checkpoints.resolve_checkpoint). The name is
    checked on every call, before the cache, so a path accepted once can never be served from
    it unchecked. Raises CheckpointNameError or CheckpointError."""
    translator = _load_translator(resolve_checkpoint(name))
    return translator if translator.name == name else _renamed(translator, name)


@st.cache_resource(show_spinner="Loading model...", max_entries=16)
def _load_translator(path: Path) -> Translator:
    """One shared, read-only Translator per checkpoint folder and process."""
    return Translator.from_checkpoint(path)


def _renamed(translator: Translator, name: str) -> Translator:
    """The same shared model under the name a page used for it (a typed path, say)."""
    return Translator(translator.model, translator.src_vocab, translator.tgt_vocab, name)


@st.cache_resource
def decode_gate() -> DecodeGate:
    """The process's limit on decodes running at once: $NMT_DECODE_SLOTS, else one per core
    (each decode runs on one torch thread; see ``side_by_side``)."""
    return DecodeGate(int(os.environ.get("NMT_DECODE_SLOTS", os.cpu_count() or 1)))


@st.cache_resource
def shared_store(purpose: str, max_entries: int) -> ResultStore:
    """The process's ResultStore for one kind of result (decodes, evaluation runs, ...)."""
    return ResultStore(max_entries)


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


@dataclass(frozen=True)
class Request:
    """One decode a page asks for: the key of its shared result."""

    name: str  # checkpoint name
    text: str
    search: SearchConfig
    prefix: Optional[tuple[int, ...]] = None  # what-if: output ids forced at the start
    attend: Optional[tuple[int, int]] = None  # what-if: (step, source position) given all the attention


def translate(request: Request) -> Decoded:
    """One sentence with one model (see ``translate_all``)."""
    return translate_all([request])[0]


def translate_all(requests: list[Request]) -> list[Decoded]:
    """The requests' decodes, in order: each decoded once per process and kept for every
    session, the missing ones side by side. While other sessions' decodes run, a short "queued"
    line is shown; a session that queued behind the same request (a class opening the page at
    once) gets its result. A broken checkpoint raises its CheckpointError before any decoding."""
    translators = [load_translator(r.name) for r in requests]  # load errors name their model
    store = shared_store("translations", 256)  # a trace with its beam tree is up to a few MB at beam 16
    results = [store.get(r) for r in requests]
    if None in results:
        waiting = st.empty()
        with QueuedSlot(waiting.info, places=results.count(None))():
            waiting.empty()
            results = [found or store.get(r) for found, r in zip(results, requests)]
            missing = [i for i, found in enumerate(results) if found is None]
            decoded = side_by_side([partial(_decode, translators[i], requests[i]) for i in missing])
            for i, result in zip(missing, decoded):
                store.put(requests[i], result)
                results[i] = result
    return results


def _decode(translator: Translator, request: Request) -> Decoded:
    start = time.perf_counter()
    trace = translator.translate([request.text], request.search,
                                 prefixes=None if request.prefix is None else [list(request.prefix)],
                                 attend=None if request.attend is None else dict([request.attend]))[0]
    return Decoded(trace, time.perf_counter() - start, translator)
