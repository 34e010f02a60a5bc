"""The Explanations tab: the methods of model/explaining/registry.py chosen by the reader, each
with its faithfulness for this sentence, and "why this word and not another" (a contrast)."""
from __future__ import annotations

from typing import Optional, Sequence

import pandas as pd
import streamlit as st

from model.explaining import registry
from model.explaining.explanation import LAYERS
from viz.figures.explanation_shares import shares_bar
from viz.figures.faithfulness_curves import curve_panels
from viz.figures.heatmap import alignment_matrix
from viz.figures.method_labels import method_label
from viz.pages.parts import widgets
from viz.pages.parts.canvas_charts import chart_ui
from viz.pages.parts.safe_text import md
from viz.i18n import _, ltr
from viz.serving import explanations
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import faithfulness_headers, unusable_ui


def explanations_tab(results: list[Decoded], settings: AppSettings) -> None:
    # the decodes' models are loaded already: asking them what they support costs nothing
    offered = list(registry.applicable(any(r.trace.attention is not None for r in results),
                                       anatomy=any(r.translator.model.supports_anatomy for r in results)))
    layered = any(r.trace.cross_attention is not None for r in results)
    offered += [LAYERS] if layered else []
    chosen = widgets.multiselect(_("Methods"), offered,
                                 default=[m for m in (*registry.defaults(), LAYERS) if m in offered],
                                 format_func=method_label, key="explain_methods")
    if "integrated_gradients" in chosen:
        st.caption(_("Integrated gradients run 16 passes per output word, more where a word's scores do not yet add "
                     "up to its change in log-probability (to within 2%): several seconds for a long sentence."))
    if not chosen:
        st.info(_("Choose a method."))
        return
    contrast = contrast_ui(results[0])
    contrasts = [contrast if result is results[0] else None for result in results]
    slots = []
    for column, result in zip(st.columns(len(results)), results):
        with column:
            unusable_ui(result.name, chosen, result.translator.model.supports_anatomy)
            slots.append(st.empty())
    # what is quick, or computed already, first for every model; then the rest, one method at a time
    per_model = [explanations.expanded(r, chosen) for r in results]
    pending = [[m for m in methods if not (registry.instant(m) or explanations.known_method(r, m, c))]
               for r, c, methods in zip(results, contrasts, per_model)]
    for stage in range(1 + max(len(p) for p in pending)):  # stage k: the first k slow methods are ready
        for slot, result, asked, methods, waiting in zip(slots, results, contrasts, per_model, pending):
            if stage > len(waiting):
                continue
            found = explanations.explained(result, tuple(m for m in methods if m not in waiting[stage:]), asked,
                                           settings)
            with slot.container():
                if stage < len(waiting):  # more to come: a preview, its charts under keys of this stage
                    explanation_view(result, found, waiting[stage:], stage)
                elif found.explanations:
                    explanation_view(result, found)
                else:
                    st.info(_("None of the chosen methods applies to {name}.").format(name=ltr(md(result.name))))


def contrast_ui(result: Decoded) -> Optional[tuple[int, int]]:
    """(step, token id) for "why this word and not that one" in the first model's output, or None."""
    trace = result.trace
    with st.expander(_("Why this word and not another? (contrast, {name})").format(name=ltr(result.name))):
        steps = list(range(len(trace.target_tokens)))
        step = st.selectbox(_("Output word"), [None] + steps, key="explain_step",
                            format_func=lambda i: _("none") if i is None else f"{i + 1}: {trace.target_tokens[i]}")
        if step is None or not trace.topk:
            return None
        others = [c for c in trace.topk[step] if c.id != trace.target_ids[step]]
        other = st.selectbox(_("rather than"), [None] + [c.id for c in others], key="explain_other",
                             format_func=lambda i: _("none") if i is None else next(
                                 f"{c.token} (p = {c.prob:.2f})" for c in others if c.id == i))
    return None if other is None else (step, other)


def explanation_view(result: Decoded, found, waiting: Sequence[str] = (), stage: int = 0) -> None:
    """The methods of ``found`` drawn for ``result``; with methods still ``waiting``, a preview
    (stage ``stage`` of the tab's run): a line naming them, the picker's choice drawn when it is
    ready, and every chart under keys of its own, replaced when the next method is ready."""
    trace = result.trace
    suffix = f"_{result.name}" + (f"_preview{stage}" if waiting else "")
    if waiting:
        st.caption(_("Still computing: {methods}. What is ready is shown.").format(
            methods=", ".join(method_label(m) for m in waiting)))
        if not found.explanations:
            return
        picked = st.session_state.get(f"explain_show_{result.name}")
        shown = picked if picked in found.explanations else next(iter(found.explanations))
    else:
        shown = st.radio(_("Show"), list(found.explanations), horizontal=True, key=f"explain_show_{result.name}",
                         format_func=method_label)
    explanation = found.explanations[shown]
    source, _prefix = explanation.normalised()
    chart_ui(alignment_matrix(source, trace.source_tokens, trace.target_tokens,
                              title=_("{name}: {method}, source").format(name=ltr(result.name),
                                                                         method=method_label(shown)),
                              value_name=_("share")), key=f"explain_heat{suffix}")
    chart_ui(shares_bar(explanation.shares(), trace.target_tokens,
                        _("{name}: source or words already written").format(name=ltr(result.name))),
             key=f"explain_shares{suffix}")
    rows = [[method_label(m), round(float(found.explanations[m].shares()[:, 0].mean()), 3), f.deletion_area,
             f.insertion_area, f.comprehensiveness, f.sufficiency] for m, f in found.faithfulness.items()]
    rows.sort(key=lambda row: row[2])
    r = found.random
    rows.append([_("random order"), None, r.deletion_area, r.insertion_area, r.comprehensiveness, r.sufficiency])
    st.dataframe(pd.DataFrame(rows, columns=faithfulness_headers()).round(3), hide_index=True, key=f"explain_faith{suffix}")
    panels = curve_panels(found.curves, found.random_curves, {m: method_label(m) for m in found.curves},
                          _("{name}: faithfulness curves").format(name=ltr(result.name)))
    for panel, which in zip(panels, ("deletion", "insertion")):
        chart_ui(panel, key=f"explain_curves_{which}{suffix}")
    gap = explanation.completeness_gap
    if shown == "integrated_gradients" and gap == gap:  # not NaN
        st.caption(_("Completeness gap: {gap} (how far the scores' sum is from the change in log-probability), "
                     "with up to {steps} passes per output word.").format(gap=f"{gap:.1%}", steps=explanation.steps))
