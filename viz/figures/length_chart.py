"""BLEU against source-sentence length (the paper's Figure 2), one line per model.

    python -m viz.commands.length_chart REPORT_DIR

draws the charts of a ``python -m model.evaluate`` report: ``length_chart.html`` from its
``scores.json`` and ``stress_chart.html`` from ``stress.json`` when present (plus .png/.svg
when plotly's static export works here), both from ``length_lines``' data. The pages draw
``LinesFigure``s on a canvas (viz/pages/parts/canvas_charts.py): ``length_lines``, and
``stress_lines`` for a card's length stress test.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Sequence

import plotly.graph_objects as go

from model.cards.schema import StressRow
from viz.figures.lines import Line, LinesFigure
from viz.i18n import _, ngettext

# One colour per model up to ten: the Models page draws every shipped model on one chart.
COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]


def length_chart(rows: Sequence[dict], title: str | None = None) -> go.Figure:
    """rows: dicts with model, lo, hi, label, count, bleu, ci95 (``model.scoring.evaluation.bleu_by_length``);
    ``title`` defaults to "BLEU by source sentence length". Its text is in the current language.

    What ``length_lines`` holds, as a plotly figure for a standalone file: each model's line over
    the bucket midpoints, its bootstrap 95% band shaded, hover with the bucket's BLEU and count.
    """
    drawn = length_lines(rows, title)
    markup = lambda text: html.escape(text).replace("\n", "<br>")  # noqa: E731  plotly renders some HTML
    fig = go.Figure()
    for line in drawn.lines:
        x, (lower, upper) = list(line.x), line.band
        fig.add_trace(go.Scatter(x=x + x[::-1], y=list(upper) + list(lower)[::-1], mode="lines", fill="toself",
                                 fillcolor=line.color, opacity=0.15, line={"width": 0}, hoverinfo="skip",
                                 showlegend=False))
        fig.add_trace(go.Scatter(x=x, y=list(line.y), mode="lines+markers", name=html.escape(line.name),
                                 line={"color": line.color, "width": 3}, customdata=[markup(h) for h in line.hovers],
                                 hovertemplate="%{customdata}<extra></extra>"))
    fig.update_layout(
        title=html.escape(drawn.title), height=420, plot_bgcolor="white", legend={"orientation": "h", "y": -0.25},
        xaxis={"title": drawn.x_title, "tickmode": "array", "tickvals": [v for v, _label in drawn.x_ticks],
               "ticktext": [markup(label) for _v, label in drawn.x_ticks], "gridcolor": "#eee"},
        yaxis={"title": drawn.y_title, "rangemode": "tozero", "gridcolor": "#eee"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


def length_lines(rows: Sequence[dict], title: str | None = None) -> LinesFigure:
    """What ``length_chart`` shows (a line per model over the buckets' midpoints, its 95% band
    shaded, each bucket's label and sentence count under the axis), as a ``LinesFigure``."""
    buckets = sorted({(r["lo"], r["hi"], r["label"]) for r in rows})
    counts = {label: max(r["count"] for r in rows if r["label"] == label) for _lo, _hi, label in buckets}
    lines = []
    for k, model in enumerate(dict.fromkeys(r["model"] for r in rows)):
        group = [r for r in rows if r["model"] == model]
        ci = [r["ci95"] or 0.0 for r in group]
        lines.append(Line(
            model, COLOURS[k % len(COLOURS)], tuple((r["lo"] + r["hi"]) / 2 for r in group),
            tuple(round(r["bleu"], 4) for r in group),
            band=(tuple(round(max(0.0, r["bleu"] - c), 4) for r, c in zip(group, ci)),
                  tuple(round(r["bleu"] + c, 4) for r, c in zip(group, ci))),
            hovers=tuple("\n".join([model, _("{words} words").format(words=r["label"]),
                                    f"BLEU {r['bleu']:.2f}" + (f" ± {r['ci95']:.2f}" if r["ci95"] else ""),
                                    ngettext("{n} sentence", "{n} sentences", r["count"]).format(n=r["count"])])
                         for r in group)))
    return LinesFigure(_("BLEU by source sentence length") if title is None else title,
                       _("source sentence length (words)"), "BLEU", tuple(lines),
                       x_ticks=tuple(((lo + hi) / 2, f"{label}\nn={counts[label]}") for lo, hi, label in buckets),
                       from_zero=True)


def stress_lines(series: dict[str, Sequence[StressRow]], title: str) -> LinesFigure:
    """BLEU against mean source length of a length stress test (k test sentences joined), one
    line per model: ``series`` maps a model name to its rows (a card's ``length_stress``)."""
    return LinesFigure(title, _("mean source length (words)"), "BLEU", tuple(
        Line(model, COLOURS[k % len(COLOURS)], tuple(r.source_words for r in rows), tuple(r.bleu for r in rows),
             hovers=tuple("\n".join([model, _("k = {k} joined ({items} items)").format(k=r.k, items=r.items),
                                     _("{words:.1f} words on average").format(words=r.source_words),
                                     f"BLEU {r.bleu:.2f}"]) for r in rows))
        for k, (model, rows) in enumerate(series.items())), from_zero=True)


def write_length_chart(rows: Sequence[dict], stem: Path) -> list[Path]:
    """Self-contained interactive HTML, plus PNG and SVG when plotly's static export works here."""
    fig = length_chart(rows)
    written = [stem.with_suffix(".html")]
    fig.write_html(written[0], include_plotlyjs=True, full_html=True)
    for suffix in (".png", ".svg"):
        try:
            fig.write_image(stem.with_suffix(suffix))
            written.append(stem.with_suffix(suffix))
        except Exception as exc:  # kaleido needs a Chrome build; without one we keep the HTML
            print(f"note: no {suffix} export ({type(exc).__name__}: {str(exc)[:120]})")
            break
    return written


def write_report_charts(report_dir: Path) -> list[Path]:
    """The charts of one evaluation report folder (see the module docstring)."""
    written = []
    for data, stem in (("scores.json", "length_chart"), ("stress.json", "stress_chart")):
        path = report_dir / data
        if path.is_file():
            written += write_length_chart(json.loads(path.read_text(encoding="utf-8"))["bleu_by_length"],
                                          report_dir / stem)
    return written
