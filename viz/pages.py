"""The app's pages, defined once so pages can link to each other."""
import streamlit as st

from . import evaluate_page, models_page, translate_page


def translate() -> st.Page:
    return st.Page(translate_page.render, title="Translate", url_path="translate", default=True)


def evaluate() -> st.Page:
    return st.Page(evaluate_page.render, title="Evaluate", url_path="evaluate")


def models() -> st.Page:
    return st.Page(models_page.render, title="Models", url_path="models")


def all_pages() -> list:
    return [translate(), evaluate(), models()]
