"""How a chart downloads: the download button of a chart the app draws on a canvas
(``viz/pages/parts/canvas_charts.py``, in the format chosen by ``chart_format_ui``), or the camera
button in a plotly chart's toolbar (the notebook's and the HTML report's), saves it as PNG or SVG.

The browser draws the file (the canvas chart's own script, or plotly.js), so the server renders
nothing. ``plotly_config`` is the config the notebook's and the report's plotly charts are shown
with. No Streamlit here, so the notebook and the report use it without a server.
"""
from __future__ import annotations

import re
from typing import Optional

FORMATS = ("png", "svg")  # what plotly.js's toImage offers that every browser opens
DEFAULT_FORMAT = "png"  # opens everywhere; SVG stays sharp at any size and keeps its text editable
PARAM = "chart_format"  # the URL parameter (and the sidebar widget's key) holding the chosen format
PNG_SCALE = 2  # pixels per screen pixel in a PNG: sharp on high-density screens and slides; SVG ignores it
MAX_STEM_CHARS = 80


def file_stem(name: str) -> str:
    """A download's file name without its extension, from a chart's key: ASCII letters, digits,
    '-' and '_' only, each run of anything else one '_' (so no path, no markup), at most
    ``MAX_STEM_CHARS`` long; "chart" when nothing is left."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", name)[:MAX_STEM_CHARS].strip("_-")
    return stem or "chart"


def plotly_config(fmt: str = DEFAULT_FORMAT, name: str = "chart") -> dict:
    """The plotly config that makes the camera button download the chart as ``fmt`` ("png" or
    "svg"), in a file named after ``name``; without plotly's logo in the toolbar."""
    if fmt not in FORMATS:
        raise ValueError(f"chart format {fmt!r} is not one of {FORMATS}")
    return {"displaylogo": False,
            "toImageButtonOptions": {"format": fmt, "filename": file_stem(name), "scale": PNG_SCALE}}


def parse_format(raw: Optional[str]) -> str:
    """The format a URL parameter asks for ("SVG" and "svg" alike), else the default."""
    value = str(raw or "").strip().lower()
    return value if value in FORMATS else DEFAULT_FORMAT
