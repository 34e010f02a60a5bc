"""Translate page: two models side by side on one sentence, then six views of the evidence.

The flow: restore the view from the URL (first run only), draw the inputs, decode with both
models (cached, queued), show the outputs, then compute and draw only the open tab
(``translate_tabs.py``), and write the view back to the URL.
"""
from __future__ import annotations

import streamlit as st

from model.familiarity import familiarity_note
from model.translate import MAX_BEAM

from . import common, hosting, nav, translate_tabs, view_state
from .view_state import View

EXAMPLES = [  # (what kind of sentence, the sentence)
    ("everyday", "I would like a cup of coffee, please."),
    ("everyday", "Where is the train station?"),
    ("everyday", "I am hungry."),
    ("everyday", "The weather is nice today."),
    ("French puts the adjective after the noun", "We bought a big black car last week."),
    ("French puts the adjective after the noun", "She has a white cat and two small dogs."),
    ("French puts object pronouns before the verb", "I know her, but I have never seen him."),
    ("French puts object pronouns before the verb", "He gave it to me yesterday."),
    ("image caption", "A man in a blue shirt is standing on a ladder cleaning windows."),
    ("image caption", "Two young children are playing with a ball in the park."),
    ("long", "A little girl in a pink dress is climbing the stairs of a wooden playhouse while her "
             "father watches from a bench and a brown dog sleeps in the grass next to them."),
    ("long", "When I was a child, my mother used to take me to the market every Saturday morning, and "
             "we always bought fresh bread, cheese and fruit for the whole week."),
]
PAPER_URL = "https://arxiv.org/abs/1409.0473"


def page() -> st.Page:
    return st.Page(render, title="Translate", url_path="translate", default=True, icon=":material/translate:")


def render() -> None:
    names = common.list_checkpoints()
    if not names:
        st.error(common.no_checkpoints_text("Train one with `python -m model.train` or set NMT_CHECKPOINTS "
                                            "to a folder of checkpoints."))
        return
    intro_ui()
    defaults = default_view(names)
    restore_view(defaults, names)
    pair = model_pair_ui(names)
    settings = common.search_settings_ui()
    text = source_ui()
    if not text.strip():
        st.info("Type an English sentence above (or pick an example) to translate it.")
        return
    results = translate_pair(pair, text, settings)
    if results is None:
        return
    outputs_ui(results)
    tab = translate_tabs.render(results, text, settings)
    share_ui(current_view(tab), defaults)


def intro_ui() -> None:
    st.title("Inside attention NMT")
    st.markdown(f"Bahdanau, Cho & Bengio ([ICLR 2015, arXiv 1409.0473]({PAPER_URL})) let a translation model "
                "*soft-search* the source sentence at every output word (**RNNsearch**) instead of squeezing it "
                "into one fixed vector (**RNNencdec**). Type a sentence and watch both translate it, word by word.")
    st.page_link(nav.link("paper"), label="The paper, section by section, with these models", icon=":material/menu_book:")


def default_view(names: list[str]) -> View:
    """The first-launch view: first example, the default pair, and the left model's decoding
    settings chosen on its validation set (from its card) when it has them."""
    left, right = common.default_pair(names)
    decoding = common.card_decoding(left)
    return View(src=EXAMPLES[0][1], left=left, right=right, beam=decoding["beam"], lp=decoding["length_norm"],
                tab="alignment", step=1)


STATE_KEYS = {"src": "source", "left": "model_left", "right": "model_right", "beam": "beam", "lp": "lp",
              "step": "step"}  # View field -> the widget key holding it


def restore_view(defaults: View, names: list[str]) -> None:
    """Put a link's view into the widgets' state: on a session's first run, and whenever the URL
    carries parameters this page did not write itself (a link followed from another page).
    What a link does not name keeps the session's value (e.g. a sentence the Evaluate page sent
    here), else the default. Each parameter that could not be used gets a notice."""
    state, params = st.session_state, st.query_params.to_dict()
    first = not state.get("view_restored")
    if first or (params and params != state.get("view_written")):
        view, notices = view_state.parse(params, defaults, names, MAX_BEAM)
        for field, key in STATE_KEYS.items():
            if field in params or key not in state:
                state[key] = getattr(view, field)
        if first or "tab" in params:
            state["tab"] = translate_tabs.LABELS[view.tab]
        state.update(view_restored=True, view_notices=notices)
    for notice in state.pop("view_notices", []):
        st.warning(notice)


def current_view(tab: str) -> View:
    state = st.session_state
    return View(src=state.get("source", ""), left=state["model_left"], right=state["model_right"],
                beam=state["beam"], lp=round(state["lp"], 1), tab=tab, step=state.get("step", 1))


def share_ui(view: View, defaults: View) -> None:
    """Keep the URL in step with the view, and offer the link to copy."""
    write_url(view_state.to_params(view, defaults))
    with st.expander("Copy link to this view", icon=":material/link:"):
        st.caption("Opens this sentence with the same models, decoding settings, tab and step.")
        st.code(view_state.link(st.context.url or "", view, defaults), language=None, wrap_lines=True)


def write_url(params: dict[str, str]) -> None:
    """Set the URL's parameters, remembering them so the next run knows they are its own."""
    st.query_params.from_dict(params)
    st.session_state["view_written"] = dict(params)


def model_pair_ui(names: list[str]) -> list[str]:
    st.sidebar.subheader("Models")
    left = st.sidebar.selectbox("Left model", names, key="model_left", format_func=common.model_label,
                                persist_state="session")
    right = st.sidebar.selectbox("Right model", names, key="model_right", format_func=common.model_label,
                                 persist_state="session")
    return [left] if right == left else [left, right]


def source_ui() -> str:
    st.selectbox("Try an example", range(len(EXAMPLES)), index=None, key="example",
                 placeholder="Everyday speech, captions, sentences where French reorders words...",
                 format_func=lambda i: f"{EXAMPLES[i][0]}: {EXAMPLES[i][1]}", on_change=_use_example)
    raw = st.text_area("English sentence", key="source", height=90, persist_state="session",
                       help="One sentence or a few; line breaks are treated as spaces. Ctrl+Enter translates.")
    text, message = common.cut_input(raw)
    if message:
        st.warning(message)
    reference = st.session_state.get("reference")
    if reference and st.session_state.get("reference_for") == raw:  # set by the Evaluate page
        st.caption("Reference (from the Evaluate page):")
        st.text(reference)
    return text


def _use_example() -> None:
    if st.session_state.example is not None:
        st.session_state.source = EXAMPLES[st.session_state.example][1]


def translate_pair(pair: list[str], text: str, settings: dict):
    """{name: (trace, seconds)}, decoded side by side, or None after showing an error for a
    broken checkpoint."""
    for name in pair:
        try:
            common.load_translator(name)
        except ValueError as exc:  # CheckpointError is a ValueError; its text names server paths
            st.error(f"Could not use checkpoint {common.md(name)}: "
                     f"{hosting.error_text(exc, 'it does not load on this server.')}")
            return None
    return common.translate_all(pair, text, settings)


def outputs_ui(results: dict) -> None:
    columns = st.columns(len(results))
    for column, (name, (trace, seconds)) in zip(columns, results.items()):
        with column:
            st.markdown(f"**{common.md(name)}** ({trace.model}) · {common.md(common.trained_on(name))}")
            st.text(trace.translation)  # st.text never interprets markup
            st.caption(f"score {trace.score:.3f} (log p {trace.logprob:.2f}, {len(trace.target_ids)} tokens) · "
                       f"{seconds * 1000:.0f} ms")
            note = familiarity_note(trace, common.load_translator(name).src_vocab)
            if note:
                st.caption(f":orange[{common.md(note)}]")
            if trace.truncated:
                st.warning("The input was longer than 200 subword tokens; only the first 200 were translated.")
