"""Paper page: Bahdanau et al. (2015), claim by claim, with the shipped models."""
from __future__ import annotations

import streamlit as st


def page() -> st.Page:
    return st.Page(render, title="Paper", url_path="paper", icon=":material/menu_book:")


def render() -> None:
    st.title("The paper, live")
