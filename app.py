"""Entry point: ``streamlit run app.py [-- --checkpoints DIR --production --decode-slots N --data-dir DIR
--align-dir DIR --cache-dir DIR --no-cache --no-warm]`` (docs/hosting.md lists the flags).

Streamlit serves ``viz/pages/main.py``, the script every visit runs, and runs ``warm_at_start``
when the server starts, so that the first visitor finds the default models loaded and the landing
page's example translated (``viz/pages/start.py``).
"""
import streamlit as st

from viz.pages.start import warm_at_start

app = st.App("viz/pages/main.py", lifespan=warm_at_start)
