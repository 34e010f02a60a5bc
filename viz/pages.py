"""The app's pages in navigation order; each page module defines its own ``st.Page``."""
import streamlit as st

from . import alignment_page, evaluate_page, models_page, nav, paper_page, translate_page


def all_pages() -> list[st.Page]:
    return nav.register({"paper": paper_page.page(), "translate": translate_page.page(),
                         "evaluate": evaluate_page.page(), "alignment": alignment_page.page(),
                         "models": models_page.page()})
