"""Static figures in the paper's own styles, for papers and slides: the grayscale alignment
matrix of Figure 3 and the BLEU-by-length curves of Figure 2, written as PDF, SVG or PNG by
matplotlib (vector files keep their text as text; no browser needed).

    python -m viz.commands.figures alignment --checkpoint checkpoints/everyday-rnnsearch-en-fr \\
        --text "The agreement on the European Economic Area was signed in August 1992." fig3.pdf
    python -m viz.commands.figures length REPORT_DIR fig2.svg     # a model.evaluate report folder
    python -m viz.commands.figures length --card checkpoints/everyday-rnnsearch-en-fr \\
        --card checkpoints/everyday-rnnencdec-en-fr fig2.png   # the cards' length stress tests

The format follows the file's suffix.

Figures are ``matplotlib.figure.Figure`` objects made directly, without pyplot: importing this
module selects no backend and changes no global setting, so a notebook keeps its own, and
server threads share no pyplot state. The print style (``STYLE``) is applied with
``matplotlib.rc_context`` only while a figure is drawn and while it is saved; rc_context swaps
the process-wide rcParams for that time and puts them back, so those blocks hold one lock, and
two threads never interleave their swaps.
"""
from __future__ import annotations

import contextlib
import io
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

import numpy as np

from model.decoding.cross_attention import every_head
from viz.figures.heatmap import MatrixFigure, alignment_matrix
from viz.figures.lines import Line, LinesFigure
from model.scoring.word_alignment import WORD_START

if TYPE_CHECKING:  # matplotlib itself (0.4 s) is imported when a figure is made or saved
    from matplotlib.figure import Figure

FORMATS = ("pdf", "svg", "png")
STYLE = {"svg.fonttype": "none", "pdf.fonttype": 42}  # SVG text as <text>, PDF fonts embedded as text
LINE_STYLES = ("-", "--", "-.", ":")
_STYLE_LOCK = threading.RLock()  # rc_context's swap of the global rcParams, one thread at a time


@contextlib.contextmanager
def _styled() -> Iterator[None]:
    """``STYLE`` in force for the block, the caller's rcParams back after it."""
    import matplotlib

    with _STYLE_LOCK, matplotlib.rc_context(STYLE):
        yield


def _label(piece: str) -> str:
    """A piece as printed: without the word-boundary mark, and never read as mathtext."""
    text = piece.replace(WORD_START, "") or WORD_START
    return text.replace("$", r"\$")


def alignment_figure(matrix: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str],
                     title: str = "", note: str = "") -> Figure:
    """Figure 3's look: source words along the top, output words down the side, each cell's
    weight in gray (white 0, black 1), no colour bar. ``matrix`` (tgt_len, src_len); ``note``,
    plain text printed under the matrix (how faithful it is, say). The heatmap's one
    description (viz/figures/heatmap.py · ``alignment_matrix``) drawn by ``print_matrix``."""
    return print_matrix(alignment_matrix(matrix, src_tokens, tgt_tokens, title, grayscale=True, digits=None), note)


def print_matrix(figure: MatrixFigure, note: str = "") -> Figure:
    """``figure`` drawn by matplotlib in Figure 3's look (gray, from 0 to its ``zmax``, 1 by default)."""
    matrix = np.asarray(figure.z, dtype=float).reshape(len(figure.y_labels), len(figure.x_labels))
    with _styled():
        return _draw_alignment(matrix, figure.x_labels, figure.y_labels, figure.title, note, figure.zmax or 1.0)


def _draw_alignment(matrix: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str], title: str,
                    note: str = "", zmax: float = 1.0) -> Figure:
    import textwrap

    from matplotlib.figure import Figure

    rows, cols = matrix.shape  # (tgt_len, src_len)
    width = max(3.0, 0.32 * cols + 1.5)
    lines = textwrap.wrap(note, max(30, int(width * 13)), break_on_hyphens=False) if note else []  # about 13 characters an inch at 8 pt
    fig = Figure(figsize=(width, max(3.0, 0.32 * rows + 1.5) + 0.16 * len(lines)))
    ax = fig.subplots()
    # cells as vector quads (pcolormesh), not a bitmap (imshow): sharp at any zoom in PDF and SVG
    ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5, matrix, cmap="gray_r", vmin=0.0, vmax=zmax)
    ax.set_xlim(-0.5, cols - 0.5)
    ax.set_ylim(rows - 0.5, -0.5)  # the first output word at the top
    ax.set_aspect("equal")
    ax.set_xticks(range(cols), [_label(t) for t in src_tokens], rotation=90)
    ax.set_yticks(range(rows), [_label(t) for t in tgt_tokens])
    ax.xaxis.tick_top()
    ax.tick_params(length=0)
    for side in ax.spines.values():
        side.set_visible(False)
    if title:
        ax.set_title(title.replace("$", r"\$"), pad=12)
    if lines:
        fig.text(0.02, 0.01, "\n".join(lines).replace("$", r"\$"), fontsize=8, va="bottom", ha="left")
        fig.tight_layout(rect=(0, 0.16 * len(lines) / fig.get_figheight() + 0.01, 1, 1))
    else:
        fig.tight_layout()
    return fig


def heads_figure(cross: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str], title: str = "",
                 note: str = "") -> Figure:
    """Every layer's every head side by side in Figure 3's look: ``cross`` (layers, heads,
    tgt_len, src_len), a row of small matrices per layer, source words along the top row, output
    words down the first column."""
    cross = np.asarray(cross, dtype=float)
    with _styled():
        return _draw_heads(cross, src_tokens, tgt_tokens, title, note)


def _draw_heads(cross: np.ndarray, src_tokens: Sequence[str], tgt_tokens: Sequence[str], title: str,
                note: str) -> Figure:
    from matplotlib.figure import Figure

    layers, heads, rows, cols = cross.shape
    cell = 0.16  # inches a cell: small multiples
    fig = Figure(figsize=(heads * (cell * cols + 0.3) + 1.2, layers * (cell * rows + 0.3) + 1.4 + (0.3 if note else 0)))
    axes = fig.subplots(layers, heads, squeeze=False)
    for choice, matrix in every_head(cross):
        k, h = choice.layer, choice.head
        ax = axes[k][h]
        ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5, matrix, cmap="gray_r", vmin=0.0, vmax=1.0)
        ax.set_xlim(-0.5, cols - 0.5)
        ax.set_ylim(rows - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.tick_params(length=0, labelsize=5)
        ax.set_xticks(range(cols), [_label(t) for t in src_tokens] if k == 0 else [""] * cols, rotation=90)
        ax.set_yticks(range(rows), [_label(t) for t in tgt_tokens] if h == 0 else [""] * rows)
        ax.xaxis.tick_top()
        ax.set_xlabel(choice.label(), fontsize=6)
        for side in ax.spines.values():
            side.set_linewidth(0.3)
    if title:
        fig.suptitle(title.replace("$", r"\$"))
    if note:
        fig.text(0.02, 0.01, note.replace("$", r"\$"), fontsize=7, va="bottom", ha="left")
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    return fig


def length_figure(series: dict[str, Sequence[tuple[float, float]]], xlabel: str = "Sentence length",
                  title: str = "") -> Figure:
    """Figure 2's look: BLEU against sentence length, one black line per model, told apart by
    line style. ``series`` maps a model name to (length, BLEU) points. The chart's description
    (a ``LinesFigure``) drawn by ``print_lines``."""
    lines = tuple(Line(name, "#000000", tuple(float(x) for x, _y in points), tuple(float(y) for _x, y in points))
                  for name, points in series.items())
    return print_lines(LinesFigure(title, xlabel, "BLEU score", lines, from_zero=True))


def print_lines(figure: LinesFigure) -> Figure:
    """``figure`` drawn by matplotlib in Figure 2's look: black lines told apart by line style and
    marker, a line's band (when it has one) in light gray."""
    with _styled():
        return _draw_lines(figure)


def _draw_lines(figure: LinesFigure) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0, 3.6))
    ax = fig.subplots()
    for k, line in enumerate(figure.lines):
        if line.band:
            ax.fill_between(line.x, line.band[0], line.band[1], color="0.9", linewidth=0)
        ax.plot(line.x, line.y, LINE_STYLES[k % len(LINE_STYLES)], color="black", marker="os^vD"[k % 5], markersize=4,
                label=line.name.replace("$", r"\$"))
    xlabel, title = figure.x_title, figure.title
    ax.set_xlabel(xlabel)
    ax.set_ylabel(figure.y_title)
    if figure.from_zero:
        ax.set_ylim(bottom=0)
    ax.grid(True, color="0.85", linewidth=0.6)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title.replace("$", r"\$"))
    fig.tight_layout()
    return fig


def save(fig: Figure, path: str | Path) -> Path:
    """Write ``fig`` as PDF, SVG or PNG, by the path's suffix."""
    path = Path(path)
    kind = path.suffix.lstrip(".").lower()
    if kind not in FORMATS:
        raise ValueError(f"{path}: write .pdf, .svg or .png")
    path.write_bytes(figure_bytes(fig, kind))
    return path


def figure_bytes(fig: Figure, kind: str) -> bytes:
    """``fig`` as the bytes of a PDF, SVG or PNG file (for a download button)."""
    if kind not in FORMATS:
        raise ValueError(f"{kind!r}: choose pdf, svg or png")
    buffer = io.BytesIO()
    with _styled():
        fig.savefig(buffer, format=kind, dpi=200 if kind == "png" else None, bbox_inches="tight")
    return buffer.getvalue()


def report_series(report_dir: Path) -> dict[str, list[tuple[float, float]]]:
    """BLEU by length from a ``model.scoring.evaluation`` report's scores.json: (bucket middle, BLEU)."""
    rows = json.loads((report_dir / "scores.json").read_text())["bleu_by_length"]
    series: dict[str, list] = {}
    for row in rows:
        if row.get("bleu") is not None:
            series.setdefault(row["model"], []).append(((row["lo"] + row["hi"]) / 2, row["bleu"]))
    return series


def card_series(folders: Sequence[Path], test_set: Optional[str] = None) -> tuple[dict, str]:
    """The cards' length stress tests on one shared test set: (mean source words, BLEU) per model."""
    from model.cards.schema import read_model_card

    cards = [read_model_card(folder) for folder in folders]
    if any(card is None for card in cards):
        raise ValueError("every --card folder needs a card.json")
    shared = [name for name in cards[0].length_stress if all(name in c.length_stress for c in cards)]
    chosen = test_set or (shared[0] if shared else None)
    if chosen not in shared:
        raise ValueError(f"no length stress test {chosen!r} in every card; shared: {', '.join(shared) or 'none'}")
    return {c.name: [(r.source_words, r.bleu) for r in c.length_stress[chosen]] for c in cards}, chosen
