"""A new visitor's first view: a page's text and controls first, its heavier parts right after.

A browser shows the elements of a Streamlit script run only once the code of every kind of
element in it has loaded and run, so one kind with large code (the data grid of ``st.dataframe``,
plotly's charts, which this app no longer draws) delays the page's text box.

So on a session's first run a page holds such a part back, with a line in its place
(``hold_ui``): the Translate page its tabs, the Sentence space page its tables, while its maps
(drawn on a canvas by ``canvas_charts.py``) come at once. At the end of that run the app draws
``probe_ui``: a tiny component with no look of its own, whose script the browser runs once it has
drawn the page. The script sends a rerun, and that run draws what was held. A browser that never
runs the script gets it on its next run (any click or key): ``start_run`` makes every run after a
session's first a whole one.

Any run may also put off a slow extra that would delay what the user asked for (``after_paint``:
the faithfulness check under a new heatmap): the run draws a line in its place and goes on, and
draws the extra there once everything else of the run is drawn (``probe_ui``, the run's end). The
browser shows what a run draws as it is drawn, so the translation and its heatmap show as fast as
without it, and the page settles in the same run, with no rerun to wait for. A fragment's own
rerun (a tab rerunning alone) computes it at once.

``bench/page_speed.py`` times a new visitor's text box and first chart, and the check after Ctrl+Enter.
"""
from __future__ import annotations

from typing import Callable

import streamlit as st

from viz.i18n import _
from viz.pages.parts.components import browser_file, registered

ENABLED = True  # the tests turn it off for apps that do not test it (tests/conftest.py)
DRAWN = "first_paint_drawn"  # session state: the browser reported its first paint, or a later run came
FIRST_RUN_SEEN = "first_paint_first_run_seen"  # session state: the session's first run has begun
HELD = "first_paint_held"  # session state: this run held something back
LATER = "first_paint_later"  # session state: this run's extras put off to its end, (place, draw) pairs
PROBES = "first_paint_probes"  # session state: how many probes this session has drawn
WHOLE_RUN = "first_paint_whole_run"  # session state: a run of the whole script is under way (not a fragment's own)
PROBE_KEY = "first_paint_probe"  # each probe's key starts so; Streamlit gives its element the class st-key-<key>
# True in a browser once the script run is over (RUN_OVER_JS), and once the page has settled: its run is
# over and no probe waits to ask for the next (a run that held its charts back ends with a probe).
# The browser tests and bench/page_speed.py wait for them.
RUN_OVER_JS = "() => document.querySelector('[data-testid=stApp]')?.dataset.testScriptState === 'notRunning'"
SETTLED_JS = f"() => ({RUN_OVER_JS})() && !document.querySelector('[class*=\"st-key-{PROBE_KEY}_\"]')"
# Runs in the browser when the component is mounted, that is, once the page around it is drawn.
_SCRIPT = browser_file("first_paint.js")


def _probe():
    return registered("inside_attention_nmt.first_paint", js=_SCRIPT)


def start_run() -> None:
    """At the start of every run (``viz/pages/main.py``): any run after a session's first may draw
    everything, whether or not the browser ran the probe (a run cut short counts too)."""
    state = st.session_state
    if state.get(FIRST_RUN_SEEN):
        state[DRAWN] = True
    state[FIRST_RUN_SEEN] = True
    state[LATER] = []  # a run cut short leaves its own: they were never drawn
    state[WHOLE_RUN] = True


def end_run() -> None:
    """When a run of the whole script ends, however it ends (``viz/pages/main.py``): what runs
    after it, until the next ``start_run``, is a fragment's own rerun."""
    st.session_state[WHOLE_RUN] = False


def ready() -> bool:
    """Whether this run may draw charts: the browser has drawn the page once, or this is not the
    session's first run (or holding is off)."""
    return not ENABLED or bool(st.session_state.get(DRAWN))


def hold_ui(text: str = "") -> None:
    """In place of what ``ready()`` held back on a session's first run: a line saying it is coming
    (``text``, by default that the charts are)."""
    st.session_state[HELD] = True
    st.caption(text or _("Drawing the charts..."))


def after_paint(draw: Callable[[], None], waiting: str) -> None:
    """Draw the slow extra ``draw()`` here, once the rest of this run is drawn: now, a line
    (``waiting``) in its place; at the run's end (``probe_ui``), ``draw()`` in that place. In a
    fragment's own rerun, or with holding off, ``draw()`` runs at once."""
    state = st.session_state
    if not ENABLED or not state.get(WHOLE_RUN):
        draw()
        return
    slot = st.empty()
    slot.caption(waiting)
    state.setdefault(LATER, []).append((slot, draw))


def probe_ui() -> None:
    """At the end of every run of the whole script (``viz/pages/main.py``): the extras put off to
    now (``after_paint``), each drawn in its place; then the probe that asks for the held charts,
    when this run held any; the run ends (``end_run``)."""
    state = st.session_state
    draws = state.pop(LATER, [])
    end_run()
    for slot, draw in draws:
        with slot.container():
            draw()
    if state.pop(HELD, False):
        state[PROBES] = state.get(PROBES, 0) + 1  # a new key each time: a probe drawn in two runs in a row
        _probe()(key=f"{PROBE_KEY}_{state[PROBES]}", on_drawn_change=_drawn)  # is mounted, and run, twice


def _drawn() -> None:
    st.session_state[DRAWN] = True
