"""The picker of one model's decode, for the tabs that show one model at a time."""
from __future__ import annotations


import streamlit as st

from viz.i18n import _
from viz.serving.decodes import Decoded


def pick_model(results: list[Decoded], key: str) -> Decoded:
    """A radio over the models shown; the chosen one's result."""
    by_name = {r.name: r for r in results}
    return by_name[st.radio(_("Model"), list(by_name), horizontal=True, key=key)]
