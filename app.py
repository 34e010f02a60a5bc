"""Entry point: ``streamlit run app.py [-- --checkpoints DIR --data-dir DIR --production --decode-slots N]``.

Page navigation and shared settings only; the pages live in ``viz/``.
"""
import argparse
import os

import streamlit as st

from viz.pages.menu import all_pages
from viz.pages.widgets import chart_format_ui

parser = argparse.ArgumentParser(prog="streamlit run app.py --")
parser.add_argument("--data-dir", help="a folder of test*.en / test*.fr files the Evaluate page offers too")
parser.add_argument("--checkpoints", help="folder of checkpoint folders (default: checkpoints/)")
parser.add_argument("--production", action="store_true",
                    help="for a server others can reach: no stack traces, no server paths, no checkpoints "
                         "from outside --checkpoints")
parser.add_argument("--decode-slots", type=int, help="decodes run at once, one core each; the rest queue (default: one per core)")
args, _ = parser.parse_known_args()
if args.production:
    st.set_option("client.showErrorDetails", "none")
    os.environ["NMT_PRODUCTION"] = "1"  # viz.hosting.production(): only the checkpoint root, no server paths shown
if args.data_dir:
    os.environ["NMT_DATA_DIR"] = args.data_dir
if args.checkpoints:
    os.environ["NMT_CHECKPOINTS"] = args.checkpoints
if args.decode_slots:
    os.environ["NMT_DECODE_SLOTS"] = str(max(1, args.decode_slots))

st.set_page_config(page_title="Inside attention NMT", layout="wide")
pages = st.navigation(all_pages())
chart_format_ui()  # the sidebar's first setting, for every page's charts
pages.run()
