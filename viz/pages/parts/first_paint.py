"""A new visitor's first view: the page's controls first, its charts right after.

A browser shows the elements of a Streamlit script run only once the code of every kind of
element in it has loaded and run. Plotly's is by far the largest (about 1.5 s of the browser's
main thread on a 2-core machine), and the syntax highlighter behind ``st.code`` comes next, so a
page that opens with a chart shows its text box only after plotly has loaded.

So a session's first run of a page draws everything but its charts, and ends with
``waiting_ui()``: a line saying the charts are coming and a tiny component with no look of its own.
The browser runs the component's script once it has drawn the page, which sends a rerun, and that
run draws the charts. A browser that never runs the script gets the charts on its next run (any
click or Ctrl+Enter): ``ready()`` is true on every run after a session's first.

``bench/page_speed.py`` times a new visitor's text box and first chart.
"""
from __future__ import annotations

import threading

import streamlit as st

from viz.i18n import _

ENABLED = True  # the tests turn it off for apps that do not test it (tests/conftest.py)
DRAWN = "first_paint_drawn"  # session state: the browser reported its first paint, or a later run came
FIRST_RUN_SEEN = "first_paint_first_run_seen"  # session state: the session's first run has drawn the probe
# Runs in the browser when the component is mounted, that is, once the page around it is drawn.
_SCRIPT = "export default function (component) { component.setTriggerValue('drawn', true); }"
_component = None
_component_lock = threading.Lock()


def _probe():
    """The component, registered once per process (a second registration would replace it with a warning)."""
    global _component
    with _component_lock:
        if _component is None:
            _component = st.components.v2.component("inside_attention_nmt.first_paint", js=_SCRIPT)
        return _component


def ready() -> bool:
    """Whether this run may draw the charts: the browser has drawn the page once, or this is not
    the session's first run (or the deferral is off)."""
    state = st.session_state
    if not ENABLED or state.get(DRAWN):
        return True
    if state.get(FIRST_RUN_SEEN):
        state[DRAWN] = True
        return True
    return False


def waiting_ui() -> None:
    """In place of the charts on a session's first run: a line, and the probe that asks for them."""
    st.session_state[FIRST_RUN_SEEN] = True
    st.caption(_("Drawing the charts..."))
    _probe()(key="first_paint_probe", on_drawn_change=_drawn)


def _drawn() -> None:
    st.session_state[DRAWN] = True
