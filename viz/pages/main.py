"""The script Streamlit runs for every visit and every interaction (``app.py`` serves it).

Parses the flags once per process into one AppSettings value and starts the pages with it; the pages live in
``viz/pages/``. Run alone (``streamlit run viz/pages/main.py -- FLAGS``, or through a launcher of one's
own), it works the same, without the warm-up at server start.
"""
import sys

import streamlit as st

from viz.pages.parts import first_paint
from viz.pages.parts.language import language_ui
from viz.pages.menu import all_pages
from viz.pages.parts.widgets import chart_format_ui
from viz.serving.hosting import production
from viz.serving.sentence_space import warm_in_background
from viz.serving.settings import SettingsError, app_flags, settings_once
from viz.i18n import _

first_paint.start_run()
language_ui()  # first: every text below, the page title included, is in the chosen language
st.set_page_config(page_title=_("Inside attention NMT"), layout="wide")
try:
    settings = settings_once(app_flags(), server_address=str(st.get_option("server.address") or ""))
except SettingsError as exc:
    print(exc, file=sys.stderr, flush=True)
    st.error(_("The app's flags could not be read:"))
    st.code(str(exc), language=None)
    st.stop()
warm_in_background(settings)  # once per process (app.py starts it at server start): the sentence spaces
if production(settings):
    st.set_option("client.showErrorDetails", "none")  # no stack traces for people other than whoever started it
pages = st.navigation(all_pages(settings))
chart_format_ui()  # for every page's charts
try:
    pages.run()
finally:
    first_paint.end_run()  # a run stopped or cut short ends too
first_paint.probe_ui()  # last: on a session's first run, asks for the charts held back
