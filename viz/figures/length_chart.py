"""BLEU against source-sentence length (the paper's Figure 2), one line per model.

    python -m viz.commands.length_chart REPORT_DIR

draws the charts of a ``python -m model.evaluate`` report: ``length_chart.html`` from its
``scores.json`` and ``stress_chart.html`` from ``stress.json`` when present (plus .png/.svg
when plotly's static export works here). The pages draw the same charts on a canvas
(``length_lines``, ``stress_lines``: ``LinesFigure``s, viz/pages/parts/canvas_charts.py).
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

    Each model gets a line over bucket midpoints, a shaded bootstrap 95% band, and hover
    with the bucket's BLEU and sentence count.
    """
    fig = go.Figure()
    hover = _("%{customdata[0]} words<br>BLEU %{y:.2f} ± %{customdata[2]}<br>%{customdata[1]} sentences")
    models = list(dict.fromkeys(r["model"] for r in rows))
    for k, model in enumerate(models):
        group = [r for r in rows if r["model"] == model]
        x = [(r["lo"] + r["hi"]) / 2 for r in group]
        colour = COLOURS[k % len(COLOURS)]
        upper = [r["bleu"] + (r["ci95"] or 0) for r in group]
        lower = [max(0.0, r["bleu"] - (r["ci95"] or 0)) for r in group]
        fig.add_trace(go.Scatter(x=x + x[::-1], y=upper + lower[::-1], mode="lines", fill="toself", fillcolor=colour,
                                 opacity=0.15, line={"width": 0}, hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(
            x=x, y=[r["bleu"] for r in group], mode="lines+markers", name=html.escape(model),
            line={"color": colour, "width": 3}, customdata=[[r["label"], r["count"], r["ci95"]] for r in group],
            hovertemplate=hover + "<extra>" + html.escape(model) + "</extra>"))
    buckets = sorted({(r["lo"], r["hi"], r["label"]) for r in rows})
    counts = {b[2]: max(r["count"] for r in rows if r["label"] == b[2]) for b in buckets}
    fig.update_layout(
        title=_("BLEU by source sentence length") if title is None else title, height=420, plot_bgcolor="white",
        legend={"orientation": "h", "y": -0.25},
        xaxis={"title": _("source sentence length (words)"), "tickmode": "array",
               "tickvals": [(lo + hi) / 2 for lo, hi, _label in buckets],
               "ticktext": [f"{label}<br>n={counts[label]}" for _lo, _hi, label in buckets], "gridcolor": "#eee"},
        yaxis={"title": "BLEU", "rangemode": "tozero", "gridcolor": "#eee"},
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
    """What ``stress_chart`` shows, as a ``LinesFigure``."""
    return LinesFigure(title, _("mean source length (words)"), "BLEU", tuple(
        Line(model, COLOURS[k % len(COLOURS)], tuple(r.source_words for r in rows), tuple(r.bleu for r in rows),
             hovers=tuple("\n".join([model, _("k = {k} joined ({items} items)").format(k=r.k, items=r.items),
                                     _("{words:.1f} words on average").format(words=r.source_words),
                                     f"BLEU {r.bleu:.2f}"]) for r in rows))
        for k, (model, rows) in enumerate(series.items())), from_zero=True)


def stress_chart(series: dict[str, Sequence[StressRow]], title: str) -> go.Figure:
    """BLEU against mean source length of a length stress test (k test sentences joined), one
    line per model: ``series`` maps a model name to its rows (a card's ``length_stress``)."""
    fig = go.Figure()
    hover = _("k = %{customdata[0]} joined (%{customdata[1]} items)<br>%{x} words on average<br>BLEU %{y:.2f}")
    for k, (model, rows) in enumerate(series.items()):
        fig.add_trace(go.Scatter(
            x=[r.source_words for r in rows], y=[r.bleu for r in rows], mode="lines+markers",
            name=html.escape(model), line={"color": COLOURS[k % len(COLOURS)], "width": 3},
            customdata=[[r.k, r.items] for r in rows],
            hovertemplate=hover + "<extra>" + html.escape(model) + "</extra>"))
    fig.update_layout(title=title, height=400, plot_bgcolor="white", legend={"orientation": "h", "y": -0.25},
                      xaxis={"title": _("mean source length (words)"), "gridcolor": "#eee"},
                      yaxis={"title": "BLEU", "rangemode": "tozero", "gridcolor": "#eee"},
                      margin={"l": 10, "r": 10, "t": 50, "b": 10})
    return fig


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
