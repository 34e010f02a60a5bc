"""What a student types survives the server: the browser writes it into the page's URL as it is
typed, before any server has seen it.

A Streamlit session lives in one server process. When that process dies or restarts, the page
reconnects (to another process behind the load balancer, or to the restarted one) and a new
session starts from the URL. The page writes its view into the URL on every run, but a sentence
typed while the server was gone, or sent the moment it died, never reached a run. This component
runs in the browser: it keeps a text box's current text in a query parameter (``history.replaceState``:
no reload, no history entry), so the new session's first run reads the typed sentence from the
URL and translates it without a second Ctrl+Enter (docs/hosting.md, "When a server dies").
"""
from __future__ import annotations

import streamlit as st

from viz.pages.parts.components import registered

_SCRIPT = """
export default function ({ data, setTriggerValue }) {
  const stored = `typed_text:${data.param}`;  // this tab's text no run has used yet
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
  document.querySelectorAll(`.st-key-${data.key} textarea`).forEach(keep);
  const typed = sessionStorage.getItem(stored);
  if (typed === null || typed === data.current) {
    sessionStorage.removeItem(stored);  // a run has used it: nothing is pending
  } else if (data.fresh) {  // a new session (the server died or restarted) never saw it: send it again
    const box = document.querySelector(`.st-key-${data.key} textarea`);
    if (box && box.value !== typed) {  // through the text box itself, as Ctrl+Enter sends it, so that the
      // browser's record of the widget's value and the server's agree (a value set by the server alone
      // is sent back as the old one by the browser's next rerun)
      Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(box, typed);
      box.dispatchEvent(new Event("input", { bubbles: true }));
    }
    if (box) {
      box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", ctrlKey: true, bubbles: true }));
    } else {
      setTriggerValue("typed", typed);
    }
  }
}
"""


def keep_in_url(key: str, param: str, most: int) -> None:
    """Keep the text of the text area with widget key ``key`` in the URL's ``param`` (and in the
    tab's session storage) as it is typed, cut to ``most`` characters. Called once the run has
    shown what it made of the text: a text no finished run has used stays pending, and a new
    session's first run hands it back to the page (which runs again with it)."""
    state = st.session_state
    fresh = not state.get(f"typed_text_seen_{key}")
    state[f"typed_text_seen_{key}"] = True
    registered("inside_attention_nmt.typed_text", js=_SCRIPT)(
        data={"key": key, "param": param, "most": most, "current": str(state.get(key, "")), "fresh": fresh},
        key=f"typed_text_{key}", on_typed_change=lambda: _typed(key, param, most))


def _typed(key: str, param: str, most: int) -> None:
    """The browser's newer text for ``key`` (a callback: it runs before the widget is drawn)."""
    value = st.session_state.get(f"typed_text_{key}")
    typed = getattr(value, "typed", None) if value is not None else None
    if isinstance(typed, str):
        st.session_state[key] = typed[:most]
