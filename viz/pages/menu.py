"""The app's pages in navigation order; each page module defines its own ``st.Page``."""
import streamlit as st

from viz.pages import alignment as alignment_page
from viz.pages import evaluate as evaluate_page
from viz.pages import lab as lab_page
from viz.pages import models as models_page
from viz.pages.parts import nav
from viz.pages import paper as paper_page
from viz.pages import sentence_space as sentence_space_page
from viz.pages import translate as translate_page
from viz.serving.settings import AppSettings


def all_pages(settings: AppSettings) -> list[st.Page]:
    """Every page, each rendering under ``settings``."""
    return nav.register({"paper": paper_page.page(settings), "translate": translate_page.page(settings),
                         "evaluate": evaluate_page.page(settings), "alignment": alignment_page.page(settings),
                         "space": sentence_space_page.page(settings), "lab": lab_page.page(settings),
                         "models": models_page.page(settings)})
