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
from viz.pages.parts.components import registered

_SCRIPT = """
export default function ({ data, setTriggerValue }) {
  const stored = `typed_text:${data.param}`;  // this tab's text no run has used yet
  const reloaded = `typed_text_reloaded:${data.param}`;  // what the page was last loaded again for
  const selector = `.st-key-${data.key} textarea`;
  const keep = (box) => {
    if (box.dataset.keptIn === data.param) return;  // once per text box element (React may replace it)
    box.dataset.keptIn = data.param;
    box.addEventListener("input", () => {
      const text = box.value.slice(0, data.most);
      sessionStorage.setItem(stored, text);
      const url = new URL(window.location.href);
      url.searchParams.set(data.param, text);
      window.history.replaceState(window.history.state, "", url);
    });
  };
  document.querySelectorAll(selector).forEach(keep);
  // Load the page again from its link with ``text`` in it: the new session's first run reads the text
  // from the link and translates it. (A run that Streamlit starts in a new session carries the query
  // string the page was loaded with, which that run writes back: the link is set again here.) Once
  // per text: a text the page changes (cut, cleaned) would otherwise stay pending for ever.
  const reloadWith = (text, mark) => {
    if (sessionStorage.getItem(reloaded) === mark) return false;
    sessionStorage.setItem(reloaded, mark);
    if (text !== null) {
      const url = new URL(window.location.href);
      url.searchParams.set(data.param, text);
      window.history.replaceState(window.history.state, "", url);
    }
    window.location.reload();
    return true;
  };
  const typed = sessionStorage.getItem(stored);
  if (typed === null || typed === data.current) {
    sessionStorage.removeItem(stored);  // a run has used it: nothing is pending
    sessionStorage.removeItem(reloaded);
  } else if (data.fresh && !reloadWith(typed, typed)) {  // a new session (the server died or restarted)
    // never saw it, and loading the page again did not help: send it through the text box, as
    // Ctrl+Enter does (a value set by the server alone is sent back as the old one by the next rerun)
    const box = document.querySelector(selector);
    if (box && box.value !== typed) {
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(box, typed);
      box.dispatchEvent(new Event("input", { bubbles: true }));
    }
    if (box) {
      box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", ctrlKey: true, bubbles: true }));
    } else {
      setTriggerValue("typed", typed);
    }
  }
  // A page that reconnects while idle starts no run (Streamlit reruns on reconnecting only when the
  // connection dropped under a run it had asked for; a Ctrl+Enter pressed the moment the server went
  // away is dropped unsent). So one watcher per tab follows the connection and, with a text still
  // pending, loads the page again as soon as a server answers: when Streamlit has reconnected and its
  // own rerun (if any) had its chance, or earlier, when the server's health check answers (Streamlit
  // waits longer and longer between its own tries).
  const app = document.querySelector("[data-testid=stApp]");
  const watchers = (window.__typedTextWatchers = window.__typedTextWatchers || {});
  if (!app || watchers[data.param]) return;
  watchers[data.param] = true;
  const reloadIfPending = (unfinished) => {
    if (!document.querySelector(selector)) return false;  // another page: the Translate page's text waits
    const pending = sessionStorage.getItem(stored);
    if (pending !== null) return reloadWith(pending, pending);
    // unfinished: the page still waits for the rerun its last run asked for (first_paint.py's probe),
    // which the old server took with it; the page's link is what is pending then
    return unfinished && reloadWith(null, window.location.href);
  };
  let dropped = false, polling = null;
  const poll = () => {
    if (!dropped || sessionStorage.getItem(stored) === null) return (polling = null);
    fetch(new URL("_stcore/health", window.location.href), { cache: "no-store" })
      .then((answer) => (answer.ok && dropped && reloadIfPending(false)))
      .catch(() => false)
      .then((done) => { polling = done ? null : setTimeout(poll, data.poll_ms); });
  };
  new MutationObserver(() => {
    if (app.dataset.testConnectionState !== "CONNECTED") {  // installed connected: any other state is a drop
      dropped = true;
      if (polling === null) polling = setTimeout(poll, data.poll_ms);
      return;
    }
    if (!dropped) return;
    dropped = false;
    setTimeout(() => app.dataset.testScriptState === "notRunning"
      && reloadIfPending(document.querySelector(data.probe) !== null), data.settle_ms);
  }).observe(app, { attributes: true, attributeFilter: ["data-test-connection-state"] });
}
"""

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
