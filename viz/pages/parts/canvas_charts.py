"""Every chart of the app, drawn on a canvas by a small script of the page's own (a Streamlit
component, no iframe; its code is ``viz/web/canvas_chart.js``): the Sentence space page's maps (``viz/figures/sentence_space.py`` ·
``SentenceMap``, a few thousand points), attention heatmaps (``viz/figures/heatmap.py`` ·
``MatrixFigure``), a decoding step's bars (``viz/figures/decoding_step.py`` · ``BarsFigure``), the
beam tree (``viz/figures/beam_tree.py`` · ``TreeFigure``), the Explanations tab's source/prefix
shares (``StackFigure``) and line charts (``viz/figures/lines.py`` · ``LinesFigure``: faithfulness
curves, BLEU by length, length stress tests, training curves).

Why not plotly: plotly's code is the largest a page loads, about 1.5 s of a 2-core browser's main
thread before the page shows anything, and redrawing a plotly heatmap after each Ctrl+Enter costs
the browser several tenths of a second more. Drawn here, a new visitor's maps and heatmaps come
with the page's text (docs/performance.md has the figures). Only the notebook and the HTML
report draw plotly figures.

What they do: hovering shows a point's sentence, a cell's tokens and weight, a node's hypothesis
or a curve's value; dragging a box zooms into a map or a beam tree, a double-click zooms out; a
click on a beam tree's node picks it (``chart_ui`` returns its id); a button (top right, shown on
hover) downloads the chart in the chosen chart format, PNG or SVG, drawn by the same paint
function as the screen.
The page's text reaches the browser as data, never as markup: the script writes it with
``textContent`` (hover, buttons), on the canvas, or escaped (SVG).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import streamlit as st

from viz.figures.download_config import PARAM, PNG_SCALE, file_stem, parse_format
from viz.figures.beam_tree import TreeFigure
from viz.figures.decoding_step import BarsFigure
from viz.figures.explanation_shares import StackFigure
from viz.figures.lines import LinesFigure
from viz.figures.heatmap import MatrixFigure
from viz.figures.sentence_space import SentenceMap
from viz.i18n import _
from viz.pages.parts.components import browser_file, registered

NAME = "inside_attention_nmt.canvas_chart"

_HTML = "<div class='canvas-chart'></div>"

_CSS = browser_file("canvas_chart.css")
_JS = browser_file("canvas_chart.js")  # six kinds of chart, each a layout, a paint function and a hit test


def _chart():
    return registered(NAME, html=_HTML, css=_CSS, js=_JS, isolate_styles=False)  # its CSS names only .canvas-chart


KINDS = {SentenceMap: "points", MatrixFigure: "matrix", BarsFigure: "bars", StackFigure: "stacks",
         LinesFigure: "lines", TreeFigure: "tree"}  # figure type -> the script's kind


def chart_data(figure, name: str, fmt: str) -> dict:
    """What the page's script receives: the figure (one of ``KINDS``' types) as plain data, with its
    kind, a map's or a tree's hint, and its download (``fmt`` "png" or "svg", a file named after
    ``name``)."""
    hint = (_("Hover over a dot to read its sentence; drag a box to zoom in, double-click to zoom out.")
            if isinstance(figure, SentenceMap) else
            _("Drag a box to zoom in, double-click to zoom out.")
            if isinstance(figure, TreeFigure) else "")
    return {"kind": KINDS[type(figure)], **dataclasses.asdict(figure), "hint": hint,
            "hover": {"x": _("source"), "y": _("target")},  # what a heatmap's hover calls its axes
            "download": {"format": fmt, "filename": file_stem(name), "scale": PNG_SCALE,
                         "label": _("Download {format}").format(format=fmt.upper())}}


def chart_ui(figure, key: str) -> Optional[int]:
    """Draw ``figure``; its download takes the chart format the sidebar chose. A ``TreeFigure``'s
    node clicked since the last run: its id (in that run only), else None; what the browser sends
    counts only when it is one of the tree's ids."""
    callbacks = {"on_picked_change": _picked} if isinstance(figure, TreeFigure) else {}
    found = _chart()(data=chart_data(figure, key, parse_format(st.session_state.get(PARAM))), key=key, **callbacks)
    picked = getattr(found, "picked", None) if callbacks else None
    return picked if type(picked) is int and picked in figure.ids else None


def _picked() -> None:
    """A node was clicked: the run that follows reads it from ``chart_ui``'s result."""
