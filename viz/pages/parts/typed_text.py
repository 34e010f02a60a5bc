"""What a student types survives the server: the browser writes it into the page's URL as it is
typed, before any server has seen it.

A Streamlit session lives in one server process. When that process dies or restarts, the page
reconnects (to another process behind the load balancer, or to the restarted one) and a new
session starts from the URL. The page writes its view into the URL on every run, but a sentence
typed while the server was gone, or sent the moment it died, never reached a run. This component
runs in the browser: it keeps a text box's current text in a query parameter (``history.replaceState``:
no reload, no history entry), so the new session's first run reads the typed sentence from the
URL and translates it without a second Ctrl+Enter (docs/hosting.md, "When a server dies").

A page that reconnects while no run was under way starts no run at all (Streamlit's rule), and a
run Streamlit starts in a new session carries the URL the page was loaded with. So the component
watches the connection, and checks each new session's first run: with a text still pending once a
server answers, it loads the page again from its URL with the text in it, once per text.
"""
from __future__ import annotations

import streamlit as st

from viz.pages.parts import first_paint
from viz.pages.parts.components import browser_file, registered

_SCRIPT = browser_file("typed_text.js")  # keeps the text box's text in the URL; reloads once after a drop

# After a reconnection, how long the watcher waits for Streamlit's own rerun to use the pending text
# before it loads the page again (a run asked for starts within tens of milliseconds of reconnecting),
# and how often it asks the server's health check while the page is disconnected.
RECONNECT_SETTLE_MS = 500
HEALTH_POLL_MS = 500


def keep_in_url(key: str, param: str, most: int) -> None:
    """Keep the text of the text area with widget key ``key`` in the URL's ``param`` (and in the
    tab's session storage) as it is typed, cut to ``most`` characters. Called once the run has
    shown what it made of the text: a text no finished run has used stays pending, and a new
    session whose first run missed it has the page loaded again with it in the URL."""
    state = st.session_state
    fresh = not state.get(f"typed_text_seen_{key}")
    state[f"typed_text_seen_{key}"] = True
    registered("inside_attention_nmt.typed_text", js=_SCRIPT)(
        data={"key": key, "param": param, "most": most, "current": str(state.get(key, "")), "fresh": fresh,
              "settle_ms": RECONNECT_SETTLE_MS, "poll_ms": HEALTH_POLL_MS,
              "probe": f'[class*="st-key-{first_paint.PROBE_KEY}_"]'},
        key=f"typed_text_{key}", on_typed_change=lambda: _typed(key, param, most))


def _typed(key: str, param: str, most: int) -> None:
    """The browser's newer text for ``key`` (a callback: it runs before the widget is drawn)."""
    value = st.session_state.get(f"typed_text_{key}")
    typed = getattr(value, "typed", None) if value is not None else None
    if isinstance(typed, str):
        st.session_state[key] = typed[:most]
