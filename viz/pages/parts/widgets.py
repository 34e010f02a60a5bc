"""Widgets more than one page draws. (Charts: ``viz/pages/parts/canvas_charts.py`` · ``chart_ui``.)"""
from __future__ import annotations

import streamlit as st

from model.corpus.licences import LANGUAGES
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM
from viz import i18n
from viz.figures.download_config import DEFAULT_FORMAT, FORMATS, PARAM, parse_format
from viz.pages.parts import language
from viz.pages.parts.url_param import keep_in_url
from viz.serving.offered_models import DEFAULT_DIRECTION, ModelInfo
from viz.i18n import N_, _, ngettext

DEFAULTS = SearchConfig()


def search_settings_ui(prefix: str = "") -> SearchConfig:
    """Sidebar widgets for decoding; returns their SearchConfig. Their values live under
    ``prefix``-ed keys for the whole session (a page may seed them first); unset ones start
    at SearchConfig's defaults."""
    st.sidebar.subheader(_("Decoding"))
    for name, default in (("beam", DEFAULTS.beam), ("lp", DEFAULTS.length_norm), ("max_len", DEFAULTS.max_len_ratio),
                          ("forbid_unk", DEFAULTS.forbid_unk), ("topk", DEFAULTS.topk)):
        st.session_state.setdefault(prefix + name, default)
    keep = {"persist_state": "session"}
    beam = st.sidebar.slider(_("Beam size"), 1, MAX_BEAM, key=f"{prefix}beam", **keep)
    length_norm = st.sidebar.slider(_("Length normalisation λ"), 0.0, 2.0, step=0.1, key=f"{prefix}lp", **keep,
                                    help=_("Hypotheses are ranked by log p / length^λ; 0 ranks by log p alone, "
                                           "which favours short outputs."))
    extra = DEFAULTS.max_len_extra
    ratio = st.sidebar.slider(_("Max output length (× source length)"), 0.5, 3.0, step=0.1, key=f"{prefix}max_len",
                              help=ngettext("plus {n} token; the paper's code stopped at 3×",
                                            "plus {n} tokens; the paper's code stopped at 3×", extra).format(n=extra),
                              **keep)
    forbid_unk = st.sidebar.checkbox(_("Forbid <unk>"), key=f"{prefix}forbid_unk", **keep)
    topk = st.sidebar.slider(_("Top-k candidates shown"), 2, 10, key=f"{prefix}topk", **keep)
    return search_config(beam, length_norm, ratio, forbid_unk, topk)


def search_config(beam: int, length_norm: float, max_len_ratio: float = DEFAULTS.max_len_ratio,
                  forbid_unk: bool = DEFAULTS.forbid_unk, topk: int = DEFAULTS.topk) -> SearchConfig:
    """The SearchConfig the sidebar's values stand for (the sliders' values rounded to their step),
    unset ones at their defaults: what ``search_settings_ui`` returns for these values."""
    return SearchConfig(beam=int(beam), length_norm=round(length_norm, 1), max_len_ratio=round(max_len_ratio, 1),
                        forbid_unk=forbid_unk, topk=int(topk))


def direction_code(direction: tuple[str, str]) -> str:
    """("en", "fr") -> "en-fr", as links write it."""
    return "-".join(direction)


# The names in model.corpus.licences.LANGUAGES (model/ writes no page text), marked here for the
# catalog; language_name shows them translated.
_LANGUAGE_NAMES = (N_("English"), N_("French"), N_("German"))


def language_name(lang: str) -> str:
    """"fr" -> "French", in the reader's language (a code the app has no name for: the code)."""
    return _(LANGUAGES[lang]) if lang in LANGUAGES else lang


def direction_label(direction: tuple[str, str]) -> str:
    """("en", "fr") -> "English → French"."""
    source, target = (language_name(lang) for lang in direction)
    # Translators: a translation direction, from one language to another; right-to-left
    # languages may point the arrow the other way.
    return _("{source} → {target}").format(source=source, target=target)


def directions(models: list[ModelInfo]) -> list[tuple[str, str]]:
    """The language directions of ``models``: the app's default first, then by name."""
    found = sorted({m.direction for m in models})
    return sorted(found, key=lambda d: d != DEFAULT_DIRECTION)


def direction_ui(codes: list[str], key: str = "direction", on_change=None) -> str:
    """The language direction whose models a page offers (sidebar), as a code such as "en-fr";
    its value lives under ``key``."""
    st.sidebar.subheader(_("Language pair"))
    shown = {code: direction_label(tuple(code.split("-"))) for code in codes}  # now: AppTest formats off this run
    return st.sidebar.selectbox(_("Translate from → to"), codes, key=key, on_change=on_change, format_func=shown.get,
                                label_visibility="collapsed", persist_state="session")


def chart_format_ui() -> str:
    """The format the download button on every chart saves, "png" or "svg" (sidebar; app.py
    draws it once for every page). A session starts with the URL's ``chart_format`` (an unknown
    value means PNG), and the URL then follows the choice."""
    state, url = st.session_state, st.query_params
    if PARAM not in state:
        state[PARAM] = parse_format(url.get(PARAM))
    fmt = st.sidebar.radio(_("Chart downloads"), FORMATS, key=PARAM, format_func=str.upper, horizontal=True,
                           help=_("The download button on each chart (top right, shown on hover) saves the chart "
                                  "in this format: PNG for documents and slides, SVG to scale or edit."))
    keep_in_url(PARAM, chart_format_params().get(PARAM))
    return fmt


def chart_format_params() -> dict[str, str]:
    """The URL parameter for the chosen chart format, none for the default so links stay short."""
    fmt = parse_format(st.session_state.get(PARAM))
    return {} if fmt == DEFAULT_FORMAT else {PARAM: fmt}


APP_PARAMS = (PARAM, language.PARAM)  # URL parameters of the whole app, not of one page's view


def app_params() -> dict[str, str]:
    """The app's own URL parameters (chart format, language) as chosen, for a page that
    rewrites the whole URL or links to another page."""
    return {**chart_format_params(), **language.language_params()}


def multiselect(label: str, options, **kwargs) -> list:
    """``st.multiselect`` with its empty-box prompt in the reader's language (Streamlit's own
    default is English)."""
    return st.multiselect(label, options, placeholder=_("Choose options"), **kwargs)


def deferred(make, *args):
    """``make(*args)`` as the zero-argument callable ``st.download_button`` runs only when its
    button is clicked, on a thread of its own: it runs in this page's language (a new thread
    would start in English).

    Every download button of the app passes ``on_click="ignore"``. A click that also reran the
    page sent the request for the file beside the rerun, and the rerun registers the callable
    anew and drops the old one: when the request came after it, nothing downloaded (most often on
    a loaded server)."""
    code = i18n.current().code

    def run():
        with i18n.using(code):
            return make(*args)

    return run


def tabs_ui(labels: dict[str, str], key: str) -> list:
    """``st.tabs`` whose open tab survives a change of language: the tabs of ``labels``
    ({slug: English label}), in order. The tabs remember the open one by the label they show, which a link
    or a page may have set in English and a click in another language; that label is moved to
    this language's before drawing (an unknown one opens the first tab)."""
    shown = {slug: _(label) for slug, label in labels.items()}
    current = st.session_state.get(key)
    if current is not None and current not in shown.values():
        st.session_state[key] = next((shown[slug] for slug, label in labels.items() if current in
                                      {i18n.catalog(c).gettext(label) for c in i18n.INTERFACE_LANGUAGES}),
                                     next(iter(shown.values())))
    return st.tabs(list(shown.values()), key=key, on_change="rerun")
