"""Entry point: ``streamlit run app.py [-- --data-dir DIR --checkpoints DIR]``.

Page navigation and shared settings only; the pages live in ``viz/``.
"""
import argparse
import os

import streamlit as st

from viz.pages import all_pages

parser = argparse.ArgumentParser(prog="streamlit run app.py --")
parser.add_argument("--data-dir", help="Multi30k folder whose test sets the Evaluate page offers")
parser.add_argument("--checkpoints", help="folder of checkpoint folders (default: checkpoints/)")
parser.add_argument("--production", action="store_true",
                    help="for a server others can reach: no stack traces, no server paths, no checkpoints "
                         "from outside --checkpoints")
args, _ = parser.parse_known_args()
if args.production:
    st.set_option("client.showErrorDetails", "none")
    os.environ["NMT_PRODUCTION"] = "1"  # viz.common.production(): only the checkpoint root, no server paths shown
if args.data_dir:
    os.environ["NMT_DATA_DIR"] = args.data_dir
if args.checkpoints:
    os.environ["NMT_CHECKPOINTS"] = args.checkpoints

st.set_page_config(page_title="Inside attention NMT", layout="wide")
st.navigation(all_pages()).run()
