"""The app's own Streamlit components (``st.components.v2``), each registered once per process:
registering one again would replace it, with a warning, on every run. Their browser code lives in
``viz/web/`` as real files (linted, and tested with Node: docs/architecture.md), read here."""
from __future__ import annotations

import threading
from functools import cache
from importlib.resources import files

import streamlit as st

_registered: dict = {}
_lock = threading.Lock()


def registered(name: str, **parts):
    """The component ``name`` made of ``parts`` (``html``, ``css``, ``js``, ``isolate_styles``),
    registered on first use; its mounting command."""
    with _lock:
        if name not in _registered:
            _registered[name] = st.components.v2.component(name, **parts)
        return _registered[name]


@cache
def browser_file(name: str) -> str:
    """The text of ``viz/web/<name>`` (a script or a style sheet), read once per process."""
    return (files("viz") / "web" / name).read_text(encoding="utf-8")
