"""The app's pages in navigation order; each page module defines its own ``st.Page``."""
import streamlit as st

from viz.pages import alignment as alignment_page
from viz.pages import evaluate as evaluate_page
from viz.pages import models as models_page
from viz.pages import nav
from viz.pages import paper as paper_page
from viz.pages import translate as translate_page


def all_pages() -> list[st.Page]:
    return nav.register({"paper": paper_page.page(), "translate": translate_page.page(),
                         "evaluate": evaluate_page.page(), "alignment": alignment_page.page(),
                         "models": models_page.page()})
