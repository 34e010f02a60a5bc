"""The language of the app's own text (sidebar; ``lang`` in the URL) and its writing direction.

``language_ui`` runs once per script run, before any page draws: a session starts with the
URL's ``lang`` (an unknown value falls back to English, with a notice that shows it escaped),
the URL then follows the choice, and the chosen catalog serves every ``_()`` of the run.
Arabic pages are laid out right to left; what is data and not the app's text (sentences typed
and translated, subword tokens, equations, code) stays left to right inside them: blocks by
the stylesheet below, inline mentions through ``viz.i18n.ltr``.
"""
from __future__ import annotations

from typing import Optional

import streamlit as st

from viz import i18n
from viz.pages.parts.safe_text import md
from viz.pages.parts.url_param import keep_in_url
from viz.i18n import INTERFACE_LANGUAGES, SOURCE, _

PARAM = "lang"
MAX_SHOWN = 20  # characters of an unusable URL value repeated in the notice

RTL_CSS = """
<style>
/* the app's own text right to left ... */
.stApp [data-testid="stMain"], .stApp [data-testid="stSidebarUserContent"], .stApp [data-testid="stSidebarNav"],
.stApp [data-testid="stDialog"] { direction: rtl; }
/* each paragraph reads in the direction of its first letter outside an ltr() isolate: Arabic
   right to left, a line of pure maths or data (‖s_0‖ = 12.6) left to right */
.stApp [data-testid="stMarkdownContainer"] :is(p, li, h1, h2, h3, h4, td, th),
.stApp [data-testid="stCaptionContainer"] { unicode-bidi: plaintext; text-align: start; }
/* ... and data left to right inside it: model inputs and outputs, tokens, equations, code */
.stApp [data-testid="stText"], .stApp pre, .stApp code, .stApp .katex-display, .stApp .katex,
.stApp [data-testid="stCode"], .stApp [data-testid="stLatex"] { direction: ltr; unicode-bidi: isolate; text-align: left; }
.stApp textarea, .stApp input[type="text"] { unicode-bidi: plaintext; text-align: start; }
/* charts keep their left-to-right axes; each label reads in the direction of its first letter */
.stApp [data-testid="stPlotlyChart"], .stApp .js-plotly-plot { direction: ltr; }
.stApp .js-plotly-plot text { unicode-bidi: plaintext; }
</style>
"""


def parse_language(value: Optional[str]) -> tuple[str, Optional[str]]:
    """The language code a URL's ``lang`` value asks for, and a notice (markdown, the value
    escaped and shortened) when it is not one the app has: English then."""
    if value is None or value in INTERFACE_LANGUAGES:
        return value or SOURCE, None
    shown = md(repr(str(value)[:MAX_SHOWN]))
    return SOURCE, _("The link's language {value} is not available; showing English.").format(value=shown)


def language_params() -> dict[str, str]:
    """The URL parameter for the chosen language, none for English so links stay short."""
    code = st.session_state.get(PARAM, SOURCE)
    return {} if code == SOURCE else {PARAM: code}


def language_ui() -> str:
    """The language choice (sidebar, first); applies it to this run's text and layout and
    keeps the URL in step. Returns the language code."""
    state, url = st.session_state, st.query_params
    notice = None
    if PARAM not in state:
        state[PARAM], notice = parse_language(url.get(PARAM))
    i18n.use(state[PARAM])  # before any text below, the menu's own label included
    st.sidebar.selectbox(_("Language"), list(INTERFACE_LANGUAGES), key=PARAM, format_func=lambda c: INTERFACE_LANGUAGES[c].name,
                         help=_("The language of the app's own text. Sentences, translations and scores are "
                                "not translated."))
    keep_in_url(PARAM, language_params().get(PARAM))
    if i18n.current().rtl:
        st.html(RTL_CSS)
    if notice:
        st.warning(notice)
    return state[PARAM]
