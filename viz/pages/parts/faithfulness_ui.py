"""How faithful a heatmap is, as every page shows it under one (the Translate, Evaluate and Paper
pages): what the output loses when the source words it ranks first go, against random words;
the columns of a faithfulness table; and the line that says why a model gets no row for a method."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import streamlit as st

from model.decoding.trace import Trace
from model.decoding.translator import Translator
from model.explaining import registry
from model.explaining.faithfulness import checkable
from viz import html_report
from viz.pages.parts import first_paint
from viz.figures.method_labels import method_label
from viz.i18n import _, ltr
from viz.pages.parts.safe_text import md
from viz.serving import explanations
from viz.serving.settings import AppSettings


def attention_check_ui(name: str, translator: Translator, trace: Trace, settings: AppSettings,
                       short: bool = False) -> None:
    """``heatmap_check_ui`` of ``trace``'s attention heatmap (``translator``, model ``name``, made it)."""
    if checkable(trace):
        heatmap_check_ui(name, translator, trace.source_ids, trace.target_ids, trace.attention, settings, short)


def heatmap_check_ui(name: str, translator: Translator, src_ids: Sequence[int], out_ids: Sequence[int],
                     matrix: np.ndarray, settings: AppSettings, short: bool = False) -> None:
    """How faithful the attention heatmap ``matrix`` (len(out_ids), len(src_ids)) is, for this
    pair: what the output loses when the most-attended source words go, against as many random
    words (``explanations.heatmap_check``, re-scored by ``translator``, model ``name``). A check
    not made before is drawn once the rest of this run is (``first_paint.after_paint``): the
    translation comes first."""
    key = explanations.heatmap_key(name, translator, src_ids, out_ids, matrix)
    if key is None:
        return
    check = explanations.known_check(key)
    if check is not None:
        check_text_ui(check, short)
        return
    first_paint.after_paint(
        lambda: check_text_ui(explanations.heatmap_check(name, translator, src_ids, out_ids, matrix, settings), short),
        _("Measuring how faithful this picture is..."))


def check_text_ui(check, short: bool) -> None:
    """The words for a heatmap's ``check`` (a ``Comprehensiveness``), in one line with ``short``."""
    if short:
        st.caption(_("How faithful: removing the most-attended source words costs the output {method} of "
                     "log-probability per token; as many random words cost {random} ({verdict}).").format(
            method=html_report.drop_text(check.method), random=html_report.drop_text(check.random),
            verdict=_("more than chance") if check.beats_random else _("no better than chance")))
        return
    verdict = (_("Here attention points at words the output depends on, more than chance does.")
               if check.beats_random else
               _("Here attention is no better than random words at finding what the output depends on."))
    st.caption(_("**How faithful is this picture?** Removing the source words with the most attention (the top "
                 "10, 20 and 50 percent: {counts} tokens) lowers the output's log-probability by {method} per token "
                 "on average; removing as many random words lowers it by {random}. {verdict} The Explanations "
                 "tab compares attention with other methods.").format(
        counts=", ".join(str(n) for n in check.removed), method=html_report.drop_text(check.method),
        random=html_report.drop_text(check.random),
        verdict=verdict))


def faithfulness_headers() -> list[str]:
    """A faithfulness table's columns, as shown: method, then test_set.FIGURES in order."""
    return [_("method"), _("source share"), _("deletion (lower is better)"), _("insertion (higher is better)"),
            _("comprehensiveness"), _("sufficiency")]


def unusable_ui(name: str, chosen: Sequence[str], anatomy: bool) -> None:
    """One caption naming the ``chosen`` methods that read a model layer by layer, which model
    ``name`` (``anatomy``: whether it can be taken apart so) cannot use, and why."""
    missing = [m for m in chosen if registry.needs_anatomy(m)] if not anatomy else []
    if missing:
        st.caption(_("{name} cannot use {methods}: each {reason}.").format(
            name=ltr(md(name)), methods=", ".join(method_label(m) for m in missing), reason=_(registry.UNSUPPORTED)))
