"""Translate page: two models side by side on one sentence, then seven views of the evidence.

The flow: restore the view from the URL (first run only), draw the inputs (language pair,
models, decoding settings, sentence), decode with both models (cached, queued), show the
outputs, then compute and draw only the open tab (``tabs.py``, a module per tab beside it), and write the view
back to the URL.
"""
from __future__ import annotations

from functools import partial
from typing import Optional

import streamlit as st

from model.corpus.licences import LANGUAGES
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM, MAX_SOURCE_TOKENS
from model.experiments.lab_run import ARCHS as LAB_ARCHS
from model.scoring.input_familiarity import FRAGMENTED_PIECES, Unfamiliar, familiarity
from viz.pages.parts import first_paint, nav, typed_text, url_state, widgets
from viz.pages.translate import tabs
from viz.pages.translate.alignment_tab import apply_heads, heads_pick
from viz.pages.parts.examples import examples
from viz.i18n import _, error_text, ltr, ngettext
from viz.pages.parts.safe_text import cut_input, md
from viz.pages.parts.serving_ui import decode_pair_for_page
from viz.pages.parts.url_state import HeadsPick, View
from viz.serving import decodes, explanations, hosting, offered_models
from viz.serving.decodes import Decoded, Refused, Request
from viz.serving.offered_models import ModelInfo
from viz.serving.settings import AppSettings

PAPER_URL = "https://arxiv.org/abs/1409.0473"
STATE_KEYS = {"pair": "direction", "src": "source", "left": "model_left", "right": "model_right", "beam": "beam",
              "lp": "lp", "step": "step"}  # View field -> the widget key holding it


def page(settings: AppSettings) -> st.Page:
    return st.Page(partial(render, settings), title=_("Translate"), url_path="translate", default=True,
                   icon=":material/translate:")


def render(settings: AppSettings) -> None:
    models = offered_models.offered(settings) + lab_models(settings)
    if not models:
        st.error(hosting.no_checkpoints_text(settings, _("Train one with `python -m model.train`, or start the app "
                                                         "with `--checkpoints DIR` naming a folder of checkpoints.")))
        return
    intro_ui()
    pairs = {widgets.direction_code(d): [m.name for m in models if m.direction == d]
             for d in widgets.directions(models)}
    default_pair = next(iter(pairs))
    defaults_for = lambda pair: default_view(pair, models)  # noqa: E731
    restore_view(pairs, defaults_for, default_pair)
    pair = widgets.direction_ui(list(pairs), on_change=lambda: apply_view(defaults_for(st.session_state.direction)))
    chosen = model_pair_ui([m for m in models if widgets.direction_code(m.direction) == pair], defaults_for(pair))
    search = widgets.search_settings_ui()
    source_lang = pair.split("-")[0]
    text = source_ui(source_lang)
    # the view into the URL now, before any decode: a server that dies while translating leaves the
    # new sentence and settings in the link the page reconnects with (typed_text.py covers typing)
    write_url(url_state.to_params(current_view(tabs.tab_slug()), defaults_for(pair), default_pair))
    if not text.strip():
        english_name = LANGUAGES.get(source_lang, source_lang)  # "an English", "a French": the article follows it
        prompt = (_("Type an {language} sentence above (or pick an example) to translate it.")
                  if english_name[0] in "AEIOU" else
                  _("Type a {language} sentence above (or pick an example) to translate it."))
        st.info(prompt.format(language=widgets.language_name(source_lang)))
        return
    results = translate_pair(chosen, text, search, settings)
    if results is None:
        return
    outputs_ui(results, settings)
    # after the translations: a run that dies before showing them leaves the typed text pending
    typed_text.keep_in_url("source", "src", url_state.MAX_PARAM_CHARS)
    if not first_paint.ready():  # a new visitor: the text box and translations first, the tabs next run
        first_paint.hold_ui()
        return
    tab = tabs.render(results, text, search, settings)
    share_ui(current_view(tab), defaults_for(pair), default_pair)


def lab_models(settings: AppSettings) -> list[ModelInfo]:
    """The models of the Lab experiment a link from the Lab page names (``lab=KEY``), offered to
    this session from then on, beside the server's checkpoints."""
    named = st.query_params.get("lab")
    if named:
        st.session_state["lab_opened"] = named[:16]
    key = st.session_state.get("lab_opened")
    if not key:
        return []
    return [m for m in (offered_models.info(f"{hosting.LAB_PREFIX}{key}/{arch}", settings) for arch in LAB_ARCHS)
            if m is not None]


def warm(settings: AppSettings) -> None:
    """The work of the landing page's first visit, done before anyone visits (app.py, at server
    start): the default pair loaded, the first example decoded with the settings the page opens
    with (kept in the shared store, where the first visitor's page finds it), with the faithfulness
    check under its heatmap."""
    models = offered_models.offered(settings)
    if not models:
        return
    view = default_view(widgets.direction_code(widgets.directions(models)[0]), models)
    text = cut_input(view.src)[0]
    if not text.strip():
        return
    search = widgets.search_config(view.beam, view.lp)
    results = decodes.shared_decodes([Request(name, text, search) for name in shown(view.left, view.right)], settings)
    for result in results:  # the check under each heatmap, kept in the shared store too
        explanations.attention_check(result.name, result.translator, result.trace, settings)


def intro_ui() -> None:
    st.title(_("Inside attention NMT"))
    st.markdown(_("Bahdanau, Cho & Bengio ([ICLR 2015, arXiv 1409.0473]({url})) let a translation model "
                  "*soft-search* the source sentence at every output word (**RNNsearch**) instead of squeezing it "
                  "into one fixed vector (**RNNencdec**). Type a sentence and watch both translate it, word by word.")
                .format(url=PAPER_URL))
    st.page_link(nav.link("paper"), label=_("The paper, section by section, with these models"),
                 icon=":material/menu_book:")


def default_view(pair: str, models: list[ModelInfo]) -> View:
    """What a language pair opens with: its first example, its default pair of models, and the
    left model's decoding settings chosen on its validation set (from its card)."""
    mine = [m for m in models if widgets.direction_code(m.direction) == pair]
    left, right = offered_models.default_pair(mine)
    decoding = next(m for m in mine if m.name == left).decoding
    sentences = examples(pair.split("-")[0])
    return View(pair=pair, src=sentences[0][1] if sentences else "", left=left, right=right, beam=decoding.beam,
                lp=decoding.length_norm, tab="alignment", step=1)


def apply_view(view: View, only: Optional[set] = None) -> None:
    """Put ``view``'s values into the widgets' state (all, or the fields in ``only``)."""
    for field, key in STATE_KEYS.items():
        if only is None or field in only:
            st.session_state[key] = getattr(view, field)
    if only is None or "heads" in only:
        apply_heads(HeadsPick.from_param(view.heads) or HeadsPick())
    if only is None or "ref" in only:  # the reference belongs to the sentence it came with (the session's, if none)
        sentence = view.src if only is None or "src" in only else st.session_state.get("source", view.src)
        st.session_state.update(reference=view.ref, reference_for=sentence)


def restore_view(pairs: dict[str, list[str]], defaults_for, default_pair: str) -> None:
    """Put a link's view into the widgets' state: on a session's first run, and whenever the URL
    carries parameters this page did not write itself (a link followed from another page).
    What a link does not name keeps the session's value (e.g. a sentence the Evaluate page sent
    here) unless the link changes the language pair, else the default. Each parameter that
    could not be used gets a notice. The chart download format and the language are the app's, not this view's."""
    state = st.session_state
    params = {name: value for name, value in st.query_params.to_dict().items() if name not in widgets.APP_PARAMS}
    first = not state.get("view_restored")
    if first or (params and params != state.get("view_written")):
        view, notices = url_state.parse(params, pairs, defaults_for, default_pair, MAX_BEAM)
        new_pair = not first and view.pair != state.get("direction")
        fields = {f for f, key in (*STATE_KEYS.items(), ("heads", "heads_layer"), ("ref", "reference"))
                  if f in params or key not in state}
        apply_view(view, None if new_pair else fields)
        if first or "tab" in params:
            state["tab"] = tabs.LABELS[view.tab]
        state.update(view_restored=True, view_notices=notices)
    if state.get("direction") not in pairs:  # the offered checkpoints changed since this view was set
        apply_view(defaults_for(default_pair))
    for notice in state.pop("view_notices", []):
        st.warning(notice)


def current_view(tab: str) -> View:
    state = st.session_state
    return View(pair=state["direction"], src=state.get("source", ""), left=state["model_left"],
                right=state["model_right"], beam=state["beam"], lp=round(state["lp"], 1), tab=tab,
                step=state.get("step", 1), heads=heads_pick().param(),
                ref=state.get("reference", "") if state.get("reference_for") == state.get("source") else "")


def share_ui(view: View, defaults: View, default_pair: str) -> None:
    """Keep the URL in step with the view, and offer the link to copy."""
    write_url(url_state.to_params(view, defaults, default_pair))
    with st.expander(_("Copy link to this view"), icon=":material/link:"):
        st.caption(_("Opens this sentence with the same language pair, models, decoding settings, tab and step."))
        st.code(url_state.link(st.context.url or "", view, defaults, default_pair), language=None, wrap_lines=True)


def write_url(params: dict[str, str]) -> None:
    """Set the URL's parameters (keeping the app's chart download format and language), remembering them so
    the next run knows they are its own."""
    st.query_params.from_dict({**params, **widgets.app_params()})
    st.session_state["view_written"] = dict(params)


def model_pair_ui(models: list[ModelInfo], defaults: View) -> list[str]:
    """The left and right models (one when both pickers name the same), among ``models``."""
    names, labels = [m.name for m in models], {m.name: m.label for m in models}
    state = st.session_state
    gone = state.setdefault("models_gone", {})  # picker key -> (the model that went away, its stand-in)
    for key, default in (("model_left", defaults.left), ("model_right", defaults.right)):
        was = state.get(key)
        if was not in names:
            state[key] = default
            if was is not None:  # the session had it: its folder went away while the page was open
                gone[key] = (str(was), default)
        if key in gone and state[key] != gone[key][1]:  # the student has picked another model since
            del gone[key]
    for was, now in gone.values():  # shown on every run until then: a later run must not drop it unseen
        st.warning(_("{model} is no longer on this server (its folder was removed or cannot be read); "
                     "showing {other} instead.").format(model=ltr(md(was)), other=ltr(md(now))))
    st.sidebar.subheader(_("Models"))
    left = st.sidebar.selectbox(_("Left model"), names, key="model_left", format_func=labels.get,
                                persist_state="session")
    right = st.sidebar.selectbox(_("Right model"), names, key="model_right", format_func=labels.get,
                                 persist_state="session")
    return shown(left, right)


def shown(left: str, right: str) -> list[str]:
    """The models the page translates with: one when both pickers name the same."""
    return [left] if right == left else [left, right]


def source_ui(lang: str) -> str:
    choices = examples(lang)
    shown = [f"{_(kind)}: {ltr(sentence)}" for kind, sentence in choices]  # kind: text; sentence: data
    st.selectbox(_("Try an example"), range(len(choices)), index=None, key="example",
                 placeholder=_("Everyday speech, captions, sentences whose word order changes..."),
                 format_func=shown.__getitem__,
                 on_change=_use_example, args=(lang,))
    raw = st.text_area(_("{language} sentence").format(language=widgets.language_name(lang)), key="source",
                       height=90, persist_state="session",
                       help=_("One sentence or a few; line breaks are treated as spaces. Ctrl+Enter translates."))
    text, message = cut_input(raw)
    if message:
        st.warning(message)
    reference = st.session_state.get("reference")
    if reference and st.session_state.get("reference_for") == raw:  # a link's ``ref`` (the Evaluate page's)
        st.caption(_("Reference (from the Evaluate page):"))
        st.text(reference)
    return text


def _use_example(lang: str) -> None:
    choice = st.session_state.example
    if choice is not None and choice < len(examples(lang)):
        st.session_state.source = examples(lang)[choice][1]


def translate_pair(names: list[str], text: str, search: SearchConfig,
                   settings: AppSettings) -> Optional[list[Decoded]]:
    """Each model's decode, side by side, from one request to the serving layer. A model that
    refuses (its checkpoint does not load, or it cannot read the sentence) gets an error and is
    left out, so the other model still translates; None when neither translates."""
    results = []
    for outcome in decode_pair_for_page([Request(name, text, search) for name in names], settings):
        if not isinstance(outcome, Refused):
            results.append(outcome)
        elif outcome.loading:  # CheckpointError, CheckpointNameError; its text names server paths
            reason = hosting.error_text(outcome.error, settings, _("it does not load on this server."),
                                        local=md(error_text(outcome.error)))
            st.error(_("Could not use checkpoint {name}: {reason}").format(name=ltr(md(outcome.name)), reason=reason))
        else:  # a word outside a vocabulary without <unk> (the PyTorch tutorial's)
            st.error(_("{name} cannot read this sentence: {reason}").format(name=ltr(md(outcome.name)),
                                                                            reason=md(error_text(outcome.error))))
    return results or None


def outputs_ui(results: list[Decoded], settings: AppSettings) -> None:
    for column, result in zip(st.columns(len(results)), results):
        with column:
            trace = result.trace
            st.markdown(f"**{md(result.name)}** ({trace.model}) · {md(offered_models.trained_on(result.name, settings))}")
            st.text(trace.translation)  # st.text never interprets markup
            n = len(trace.target_ids)
            st.caption(ngettext("score {score:.3f} (log p {logprob:.2f}, {n} token) · {ms:.0f} ms",
                                "score {score:.3f} (log p {logprob:.2f}, {n} tokens) · {ms:.0f} ms", n)
                       .format(score=trace.score, logprob=trace.logprob, n=n, ms=result.seconds * 1000))
            note = familiarity_text(familiarity(trace, result.translator.src_vocab))
            if note:
                st.caption(f":orange[{note}]")
            if trace.truncated:
                st.warning(_("The input was longer than {n} subword tokens; only the first {n} were translated.")
                           .format(n=MAX_SOURCE_TOKENS))


def familiarity_text(found: Optional[Unfamiliar]) -> Optional[str]:
    """The page's one line (markdown) on an input unlike the model's training data."""
    if found is None:
        return None
    if found.signal == "unknown":
        return ngettext("{n} source piece is unknown to this model ({unk}): it is not in its vocabulary.",
                        "{n} source pieces are unknown to this model ({unk}): they are not in its vocabulary.",
                        found.unknown).format(n=found.unknown, unk=ltr(md("<unk>")))
    if found.signal == "fragmented":
        return _("{rare} of {words} words are split into {pieces}+ pieces: vocabulary this model rarely saw, so "
                 "expect a weak translation.").format(rare=found.rare, words=found.words, pieces=FRAGMENTED_PIECES)
    return _("The model is unsure of this output (mean log p per token {per_token:.2f}): the input is probably far "
             "from its training data.").format(per_token=found.per_token)
