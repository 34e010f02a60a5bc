"""One URL query parameter that follows a setting of the whole app (language, chart format)."""
from __future__ import annotations

from typing import Optional

import streamlit as st


def keep_in_url(name: str, wanted: Optional[str]) -> None:
    """Make the URL's ``name`` parameter ``wanted`` (absent when None), writing only on a
    change: each write sends the browser a new URL."""
    url = st.query_params
    if url.get(name) != wanted:
        if wanted:
            url[name] = wanted
        else:
            del url[name]
