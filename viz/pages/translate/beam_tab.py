"""The Beam tree tab: the whole search as a tree; a click on a node shows its hypothesis."""
from __future__ import annotations


import numpy as np
import streamlit as st

from viz.figures.beam_tree import beam_tree
from viz.figures.heatmap import alignment_matrix
from viz.pages.parts.canvas_charts import chart_ui
from viz.i18n import N_, _, ltr, ngettext
from viz.pages.parts.safe_text import md
from viz.serving.decodes import Decoded
from viz.serving.settings import AppSettings
from viz.pages.parts.faithfulness_ui import heatmap_check_ui
from viz.pages.translate.model_picker import pick_model


_STATUS_NAMES = (N_("pruned"), N_("kept"), N_("finished"), N_("best"))  # a beam node's status, shown through _()


def beam_tab(results: list[Decoded], settings: AppSettings) -> None:
    result = pick_model(results, "beam_model")
    name, trace = result.name, result.trace
    nodes = [n.to_json() for n in trace.beam]
    pruned = st.toggle(_("Show pruned candidates"), value=True, key="beam_pruned",
                       help=_("Hide them for a compact tree of what the beam kept"))
    shown = nodes if pruned else [n for n in nodes if n["status"] != "pruned"]
    st.caption(ngettext("{n} hypothesis ({shown} shown). Click a node to see its text and attention.",
                        "{n} hypotheses ({shown} shown). Click a node to see its text and attention.", len(nodes))
               .format(n=len(nodes), shown=len(shown)))
    picked = chart_ui(beam_tree(shown, _("{name}: beam search").format(name=ltr(name))), key=f"beam_tree_{name}")
    if picked is not None:  # a click moves the number box (its value lives under its key)
        st.session_state[f"beam_node_{name}"] = picked
    node_id = st.number_input(_("Node id"), 0, max(len(nodes) - 1, 0), key=f"beam_node_{name}")
    _show_hypothesis(result, int(node_id), settings)


def _show_hypothesis(result: Decoded, node_id: int, settings: AppSettings) -> None:
    trace = result.trace
    path = trace.path(node_id)[1:]
    text = result.translator.tgt_vocab.decode([n.token_id for n in path])
    node = trace.beam[node_id]
    st.markdown(_("**Hypothesis {id}** ({status}): {text}")
                .format(id=node_id, status=_(node.status),
                        text=ltr(md(text)) if text else _("(empty)")))
    st.caption(ngettext("log p {score:.3f}, normalised {norm:.3f}, {n} token",
                        "log p {score:.3f}, normalised {norm:.3f}, {n} tokens", node.step)
               .format(score=node.score, norm=node.norm_score, n=node.step))
    if path and path[0].attention is not None:
        matrix = np.stack([n.attention for n in path])  # (the hypothesis's tokens, source tokens)
        chart_ui(alignment_matrix(matrix, trace.source_tokens, [n.token for n in path],
                                   title=_("attention α along this hypothesis")), key="beam_node_heatmap")
        heatmap_check_ui(result.name, result.translator, trace.source_ids, [n.token_id for n in path], matrix,
                         settings, short=True)
