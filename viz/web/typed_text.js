// What a student types survives the server (viz/pages/parts/typed_text.py): the text box's text is
// kept in the page's URL and this tab's session storage as it is typed, and a new session whose first
// run missed it has the page loaded again with it (docs/hosting.md, "When a server dies").
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
