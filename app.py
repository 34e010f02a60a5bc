"""Entry point: ``streamlit run app.py``. Page navigation and shared settings only."""
import streamlit as st

from viz import models_page, translate_page

st.set_page_config(page_title="Inside attention NMT", page_icon="🔎", layout="wide")

pages = [
    st.Page(translate_page.render, title="Translate", url_path="translate", default=True),
    st.Page(models_page.render, title="Models", url_path="models"),
]
st.navigation(pages).run()
