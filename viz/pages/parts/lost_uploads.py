"""Uploads a new server session cannot have: said in one line, never a silent reset.

An uploaded file lives in the server process's session. When that process dies or restarts, the
page reconnects to a new session (docs/hosting.md, "When a server dies or restarts"), which has no
file. The page marks an upload's file names in the URL; a session's first run that finds the mark
but no file asks for the file again, naming it and saying why.
"""
from __future__ import annotations

from typing import Optional, Sequence

import streamlit as st

from viz.i18n import _, ltr
from viz.pages.parts.safe_text import md

MAX_NAMES_CHARS = 200  # the URL keeps at most this much of the file names


def lost_uploads_ui(param: str, names: Optional[Sequence[str]]) -> None:
    """Keep ``names`` (the files uploaded now; None without any) in the URL's ``param``; on a
    session's first run without files, a mark left by an earlier session gets one line."""
    state = st.session_state
    first = not state.get(f"{param}_seen")
    state[f"{param}_seen"] = True
    marked = st.query_params.get(param)
    if names:
        value = ", ".join(names)[:MAX_NAMES_CHARS]
        if marked != value:
            st.query_params[param] = value
    elif marked is not None:
        if first:
            st.warning(_("The server restarted, or this page moved to another server: please upload {names} "
                         "again.").format(names=ltr(md(marked[:MAX_NAMES_CHARS]))))
        else:  # the user removed the file
            del st.query_params[param]
