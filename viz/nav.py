"""Links between pages without imports between page modules.

Each page module exposes ``page() -> st.Page``; ``viz/pages.py`` lists them and registers
them here at start-up, so a page can link to another (``link("translate")``) while no page
module imports another.
"""
from __future__ import annotations

import streamlit as st

_PAGES: dict[str, st.Page] = {}


def register(pages: list[st.Page]) -> list[st.Page]:
    """Remember ``pages`` by url path (what app.py hands to st.navigation); returns them."""
    _PAGES.update({p.url_path: p for p in pages})
    return pages


def link(url_path: str) -> st.Page:
    """The registered page at ``url_path`` (for st.page_link and st.switch_page)."""
    return _PAGES[url_path]
