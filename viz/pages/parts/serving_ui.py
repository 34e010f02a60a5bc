"""The serving layer (``viz/serving/``) as the pages call it, with what only Streamlit can do
around it: spinners while a model or a test set is read, the "Queued: N requests ahead of
yours" line, and worker threads that carry the script run's context so that they may update
elements the page made (progress bars)."""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

from model.corpus.test_sets import EvalSet
from model.decoding.translator import Translator
from viz.serving import builtin_sets, decodes
from viz.serving.decodes import Decoded, QueueNotice, Request
from viz.serving.settings import AppSettings
from viz.i18n import N_, _

T = TypeVar("T")
LOADING = N_("Loading model...")  # shown (through _) when loading outlasts st.spinner's delay (a first load)


def queue_notice() -> QueueNotice:
    """A line at this point of the page that says how many requests are ahead while queued,
    and is emptied once the request is admitted."""
    spot = st.empty()
    return QueueNotice(spot.info, spot.empty)


def carry_page_context(call: Callable[[], T]) -> Callable[[], T]:
    """``call`` for a worker thread, with this script run's context, so it may update the page."""
    ctx = get_script_run_ctx()

    def run() -> T:
        add_script_run_ctx(threading.current_thread(), ctx)
        return call()

    return run


def side_by_side_on_page(calls: list[Callable[[], T]]) -> list[T]:
    """``decodes.side_by_side`` with threads that may update this page."""
    return decodes.side_by_side(calls, carry=carry_page_context)


def translator_for_page(name: str, settings: AppSettings) -> Translator:
    """``decodes.load_translator`` under a spinner."""
    with st.spinner(_(LOADING)):
        return decodes.load_translator(name, settings)


def decode_pair_for_page(requests: list[Request], settings: AppSettings) -> list:
    """``decodes.decode_pair`` (a ``Decoded`` or a ``Refused`` per request) under a spinner while
    models load, with the queued line (which its worker threads may update: a request waits for
    its batch there)."""
    return decodes.decode_pair(requests, settings, on_queued=queue_notice, carry=carry_page_context,
                               loading=lambda: st.spinner(_(LOADING)))


def decode_for_page(requests: list[Request], settings: AppSettings) -> list[Decoded]:
    """``decode_pair_for_page`` for callers that need every decode: a refusal raises its error."""
    return decodes.every_decoded(decode_pair_for_page(requests, settings))


def decode_one_for_page(request: Request, settings: AppSettings) -> Decoded:
    """One sentence with one model (``decode_for_page``)."""
    return decode_for_page([request], settings)[0]


def load_builtin_set(entry: builtin_sets.BuiltinSet) -> EvalSet:
    """``builtin_sets.load_builtin_set`` under a spinner."""
    with st.spinner(_("Reading the test set...")):
        return builtin_sets.load_builtin_set(entry)
