"""Links between pages without imports between page modules.

Each page module exposes ``page(settings) -> st.Page``; ``menu.py`` lists them and registers
them here by name at start-up, so a page can link to another (``link("translate")``) while no
page module imports another.
"""
from __future__ import annotations

import streamlit as st

_PAGES: dict[str, st.Page] = {}


def register(pages: dict[str, st.Page]) -> list[st.Page]:
    """Remember ``pages`` by name (the default page's url_path is "", so names are given);
    returns them in order, for st.navigation."""
    _PAGES.update(pages)
    return list(pages.values())


def link(name: str) -> st.Page:
    """The registered page called ``name`` (for st.page_link and st.switch_page)."""
    return _PAGES[name]
