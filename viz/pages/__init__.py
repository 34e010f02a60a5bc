"""The Streamlit pages and their tabs: the only modules that import streamlit. ``menu.all_pages``
lists them in navigation order."""
