"""The Downloads tab: the trace as JSON, the alignment in Pharaoh format, the HTML report and the
print figures, each made when its button is clicked."""
from __future__ import annotations

import json

import streamlit as st

from viz import html_report
from viz.figures import print_figures
from viz.figures.heatmap import pharaoh
from viz.pages.parts import widgets
from viz.i18n import _, ltr
from viz.serving import explanations
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings


def report(text: str, results: list[Decoded], settings: AppSettings) -> str:
    """The Downloads tab's HTML report, with the check under each heatmap (``attention_check_ui``'s)."""
    return html_report.report_html(text, [(r.name, r.trace) for r in results],
                                   {r.name: explanations.attention_check(r.name, r.translator, r.trace, settings)
                                    for r in results})


def print_figure(result: Decoded, kind: str, settings: AppSettings) -> bytes:
    """The paper's Figure 3 look of ``result``'s attention as a ``kind`` file, with how faithful
    it is under it (matplotlib is imported by the first one made: 0.4 s)."""
    trace = result.trace
    check = explanations.attention_check(result.name, result.translator, trace, settings)
    return print_figures.figure_bytes(print_figures.alignment_figure(
        trace.attention, trace.source_tokens, trace.target_tokens,
        note="" if check is None else html_report.check_sentence(check)), kind)


def downloads_tab(results: list[Decoded], settings: AppSettings) -> None:
    """The files of this translation. Each is made only when its button is clicked (the button's
    data is a callable, ``widgets.deferred``): the report and the matplotlib figures take about a
    second to make, and every Ctrl+Enter on this tab would otherwise make all of them."""
    st.caption(_("Figures: each chart's download button (top right, shown on hover) saves it as PNG or SVG; "
                 "`{command}` writes the paper's figure styles as PDF, SVG or PNG.").format(command="nmt-figures"))
    text = results[0].trace.source if results else ""
    st.download_button(_("Report of this translation (one HTML file: both models' heatmaps, beam trees and steps; "
                         "opens offline)"), widgets.deferred(report, text, results, settings),
                       file_name="translation-report.html", mime="text/html", key="dl_report", on_click="ignore")
    for result in results:
        name, trace = result.name, result.trace
        if trace.attention is not None:  # the paper's Figure 3 look, drawn by matplotlib on this server
            for column, kind in zip(st.columns(len(print_figures.FORMATS)), print_figures.FORMATS):
                column.download_button(_("{name}: heatmap ({format})").format(name=ltr(name), format=kind.upper()),
                                       widgets.deferred(print_figure, result, kind, settings),
                                       file_name=f"{name}-attention.{kind}", key=f"dl_fig_{kind}_{name}",
                                       on_click="ignore")
        st.download_button(_("{name}: trace (JSON)").format(name=ltr(name)),
                           widgets.deferred(lambda trace: json.dumps(trace.to_json(), ensure_ascii=False, indent=1), trace),
                           file_name=f"{name}-trace.json", mime="application/json", key=f"dl_trace_{name}",
                           on_click="ignore")
        if trace.attention is not None:
            ends = trace.target_tokens[-1:] == ["</s>"]  # an output cut at a model's length cap has no </s> row
            st.download_button(_("{name}: alignment (Pharaoh i-j)").format(name=ltr(name)),
                               pharaoh(trace.attention, drop_eos=ends) + "\n",
                               file_name=f"{name}.align", key=f"dl_align_{name}", on_click="ignore")
