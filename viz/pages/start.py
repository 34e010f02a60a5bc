"""What the server does when it starts, before any visitor: ``warm_at_start``, the lifespan
``app.py`` gives ``st.App``.

Streamlit runs a page's script only when someone visits, so without this the first visitor
would wait for torch's import, the models' loading and the first decode. The server first imports
the pages and torch (``import_pages``; it answers once they are in), then a thread does the rest
while the server already answers: the default pair is loaded and the landing page's example
translated, with its heatmap's faithfulness check (``translate.warm``), then the sentence spaces
are made ready at low priority (``viz/serving/sentence_space.py`` · ``warm_in_background``;
``--no-warm`` turns that off). A visitor who comes meanwhile waits only for what is not done yet
(the shared caches compute each value once). Nothing in the thread is required: a failure is
logged and the pages do the work on first use.

Why the imports come before the server answers: a server that answers is then ready, so a
balancer (docs/hosting.md) sends visitors to it only once a page's first run no longer waits for
torch. From launch, the first translation comes no later either way (docs/performance.md).
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import logging
import threading
import time
from typing import AsyncIterator, Optional, Sequence

import streamlit as st

from viz.serving.settings import SettingsError, app_flags, settings_once

_log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def warm_at_start(app) -> AsyncIterator[None]:
    """``st.App``'s lifespan: ``import_pages`` (the server answers once it is done), then ``warm``
    started in a daemon thread; returns without waiting for it (the server takes visitors while
    it runs)."""
    await asyncio.to_thread(import_pages)
    start_warming(app_flags())
    yield


PAGES = "viz.pages.menu"  # the page script's list of pages: it imports every page, and torch with them


def import_pages() -> None:
    """Import every page's module (and so torch), as the page script's first run would."""
    importlib.import_module(PAGES)


def start_warming(argv: Sequence[str]) -> threading.Thread:
    """``warm(argv)`` in a daemon thread named "warm at start", started; the thread."""
    thread = threading.Thread(target=warm, args=(tuple(argv),), name="warm at start", daemon=True)
    thread.start()
    return thread


def warm(argv: tuple[str, ...]) -> Optional[str]:
    """Load and decode what the landing page shows, freeze what is loaded by then out of the
    garbage collector's scans, then start the sentence spaces' warm-up;
    returns what stopped it (None when all went), for the log and the tests. Run alone (the
    tests), it imports the pages itself."""
    from viz.pages import translate
    from viz.serving.sentence_space import warm_in_background

    try:
        settings = settings_once(argv, server_address=str(st.get_option("server.address") or ""))
    except SettingsError as exc:  # the page shows it to the first visitor
        return f"flags: {exc}"
    stopped = None
    begun = time.perf_counter()
    try:
        translate.warm(settings)
        _log.info("the landing page was ready %.1f s after its warm-up began", time.perf_counter() - begun)
    except Exception as exc:  # a broken checkpoint, an unreadable card: the page reports it in place
        _log.warning("warming the landing page at start failed: %s", exc)
        stopped = f"landing page: {exc}"
    # What is loaded by now (torch, the pages, the default models) stays for the server's life. A full
    # garbage collection holds the interpreter's lock, stopping every session, while it scans every
    # object it tracks: frozen, these are no longer scanned (bench/gc_pause.py).
    gc.freeze()
    warm_in_background(settings)
    return stopped
