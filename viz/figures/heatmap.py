"""Alignment heatmaps (the paper's Figure 3) and merging subword pieces into words.

Pure functions: numpy arrays and token lists in, a ``MatrixFigure`` out: the one description of a
heatmap, which three renderers draw: the pages' canvas (viz/pages/parts/canvas_charts.py, without
plotly), plotly for the notebook and the report (``plotly_matrix``) and matplotlib for print
figures (viz/figures/print_figures.py · ``print_matrix``). Every plotly label
that came from user text is HTML-escaped, since plotly renders a subset of HTML in labels; the
figures' own words (axis titles, hover labels) are in the reader's language.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, replace
from typing import Iterable, Optional, Sequence

import numpy as np
import plotly.graph_objects as go

from model.scoring.word_alignment import BPE_JOINER, WORD_START, word_matrix, word_spans
from viz.i18n import _


def token_text(piece: str) -> str:
    """A piece as shown in figures: without the word-boundary mark."""
    return piece.replace(WORD_START, "") or WORD_START


def display_token(piece: str) -> str:
    """``token_text``, HTML-escaped, for plotly's labels."""
    return html.escape(token_text(piece), quote=False)  # plotly.js decodes &lt; &gt; &amp; but not &quot;


@dataclass(frozen=True)
class MatrixLinks:
    """Cells marked over a matrix: (column, row) pairs, drawn as ``shape``s of ``color``."""

    name: str
    cells: tuple[tuple[int, int], ...]
    color: str = "#d62728"
    shape: str = "ring"  # or "square", "cross"


@dataclass(frozen=True)
class MatrixFigure:
    """An alignment heatmap as the pages draw it on a canvas (``viz/pages/parts/canvas_charts.py``):
    ``z`` (rows, columns), rows the output tokens top to bottom, columns the source tokens. Tokens
    are plain text (the page's script writes them as text); ``zmax`` None means the largest value."""

    title: str
    x_labels: tuple[str, ...]
    y_labels: tuple[str, ...]
    z: tuple[tuple[float, ...], ...]
    x_title: str
    y_title: str
    value_name: str
    palette: str  # "greys" (the paper's Figure 3) or "blues"
    zmax: Optional[float] = 1.0
    links: tuple[MatrixLinks, ...] = ()


DIGITS = 6  # decimals of each weight sent to the page (its hover shows 3; rows still sum to 1 within 1e-4)


def alignment_matrix(matrix: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str], title: str = "",
                     grayscale: bool = False, zmax: Optional[float] = 1.0,
                     value_name: Optional[str] = None, row_name: Optional[str] = None,
                     column_name: Optional[str] = None, digits: Optional[int] = DIGITS) -> MatrixFigure:
    """An alignment heatmap's description; ``row_name`` and ``column_name`` name the axes (default
    "output" and "source": output and source tokens); ``digits``: the weights' decimals (what the
    page is sent), None for all (the notebook's and print figures' files)."""
    matrix = np.asarray(matrix, dtype=float)  # (tgt, src)
    matrix = matrix if digits is None else np.round(matrix, digits)
    return MatrixFigure(title, tuple(token_text(t) for t in src_tokens), tuple(token_text(t) for t in tgt_tokens),
                        tuple(tuple(row) for row in matrix.tolist()), _("source") if column_name is None else column_name,
                        _("output") if row_name is None else row_name,
                        _("weight") if value_name is None else value_name, "greys" if grayscale else "blues", zmax)


def _cells(links: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Word links (source i, target j) as sorted (column, row) cells, each once."""
    return tuple(sorted({(int(i), int(j)) for i, j in links}))


def with_links(figure: MatrixFigure, links: Iterable[tuple[int, int]], name: str) -> MatrixFigure:
    """``figure`` with word links (source i, target j) marked over it as circles."""
    return replace(figure, links=figure.links + (MatrixLinks(name, _cells(links)),))


def merge_to_words(matrix: np.ndarray, src_pieces: Sequence[str], tgt_pieces: Sequence[str]):
    """Word-level alignment from a (tgt_pieces, src_pieces) matrix.

    Columns of one source word are **summed** (the weight given to the word is the weight
    given to its pieces); rows of one target word are **averaged** rather than summed, so
    every row stays a distribution that sums to 1 and words made of many pieces are not
    drawn darker than one-piece words. Returns (matrix, source words, target words).
    """
    src_spans, tgt_spans = word_spans(src_pieces), word_spans(tgt_pieces)
    rows = word_matrix(matrix, src_spans, tgt_spans)
    join = lambda pieces, spans: ["".join(pieces[a:b]).replace(WORD_START, "").replace(BPE_JOINER, "")  # noqa: E731
                                  or WORD_START for a, b in spans]
    return rows, join(src_pieces, src_spans), join(tgt_pieces, tgt_spans)


def alignment_heatmap(matrix: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str],
                      title: str = "", grayscale: bool = False, zmax: Optional[float] = 1.0,
                      value_name: Optional[str] = None) -> go.Figure:
    """Target tokens (rows, top to bottom) x source tokens (columns) heatmap, as plotly draws
    ``alignment_matrix``'s figure (``plotly_matrix``)."""
    return plotly_matrix(alignment_matrix(matrix, src_tokens, tgt_tokens, title, grayscale, zmax, value_name,
                                          digits=None))


def plotly_matrix(figure: MatrixFigure) -> go.Figure:
    """``figure`` drawn by plotly. Positions, not labels, are the axis values so repeated tokens
    stay separate cells; hover shows both tokens and the value; labels are HTML-escaped."""
    value_name, source, target = figure.value_name, figure.x_title, _("target")
    matrix = np.asarray(figure.z, dtype=float).reshape(len(figure.y_labels), len(figure.x_labels))
    src_labels = [html.escape(t, quote=False) for t in figure.x_labels]  # plotly.js decodes &lt; &gt; &amp; only
    tgt_labels = [html.escape(t, quote=False) for t in figure.y_labels]
    title, zmax, output = figure.title, figure.zmax, figure.y_title
    custom = [[[s, t] for s in src_labels] for t in tgt_labels]
    size = max(len(src_labels), len(tgt_labels))
    font = 13 if size <= 25 else 10 if size <= 45 else 8
    # the trace and the layout given whole to the constructor as plain dicts: a go.Heatmap object
    # (validated twice) and fig.update_layout's update machinery made it 22 ms instead of 7 ms for a
    # 12 x 14 matrix, on every Translate page run of every user
    return go.Figure(data=[dict(
        type="heatmap", z=matrix.tolist(), x=list(range(len(src_labels))), y=list(range(len(tgt_labels))),
        customdata=custom, colorscale="Greys" if figure.palette == "greys" else "Blues", reversescale=False, zmin=0,
        zmax=zmax,
        hovertemplate=f"{source}: %{{customdata[0]}}<br>{target}: %{{customdata[1]}}<br>{value_name}: %{{z:.3f}}"
                      "<extra></extra>",
        colorbar={"title": value_name})], layout={
        "title": title, "height": max(320, 22 * len(tgt_labels) + 160), "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "xaxis": {"tickmode": "array", "tickvals": list(range(len(src_labels))), "ticktext": src_labels,
                  "side": "top", "tickangle": -60, "tickfont": {"size": font}, "title": source},
        "yaxis": {"tickmode": "array", "tickvals": list(range(len(tgt_labels))), "ticktext": tgt_labels,
                  "autorange": "reversed", "tickfont": {"size": font}, "title": output},
        "plot_bgcolor": "white"})


def pharaoh(attention: np.ndarray, drop_eos: bool = True) -> str:
    """Hard alignment "i-j" pairs (source i, target j, 0-based) from the attention argmax."""
    rows = attention[:-1] if drop_eos and len(attention) > 1 else attention
    return " ".join(f"{int(np.argmax(row))}-{j}" for j, row in enumerate(rows))


def answer_key_matrix(matrix: np.ndarray, src_words: Sequence[str], tgt_words: Sequence[str],
                      sure: Iterable[tuple[int, int]], possible: Iterable[tuple[int, int]],
                      predicted: Iterable[tuple[int, int]], title: str = "",
                      value_name: Optional[str] = None) -> MatrixFigure:
    """A word-level (target words, source words) heatmap with the gold links drawn over it:
    sure links as squares, possible-only links as circles, and the links a method picked as
    crosses; links are (source i, target j). Its colours run up to the matrix's largest value."""
    sure = _cells(sure)
    figure = alignment_matrix(matrix, src_words, tgt_words, title, zmax=None, value_name=value_name)
    return replace(figure, links=(
        MatrixLinks(_("gold: sure"), sure, "#d62728", "square"),
        MatrixLinks(_("gold: possible"), tuple(c for c in _cells(possible) if c not in sure), "#ff7f0e"),
        MatrixLinks(_("picked"), _cells(predicted), "#2ca02c", "cross")))
