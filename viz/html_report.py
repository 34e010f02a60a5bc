"""One translation as a standalone HTML file: each model's output, attention heatmap, beam
tree and step-by-step table, with plotly.js embedded once, so the file opens offline in any
browser. Under each heatmap, how faithful it is for that sentence. Every piece of user text is
HTML-escaped.

    python -m viz.commands.report --checkpoint checkpoints/everyday-rnnsearch-en-fr \\
        --checkpoint checkpoints/everyday-rnnencdec-en-fr --text "I would like a cup of coffee." out.html

The Translate page's Downloads tab offers the same file.
"""
from __future__ import annotations

import html
import math
from typing import Mapping, Optional, Sequence

from model.decoding.trace import Trace
from model.explaining.faithfulness import Comprehensiveness
from viz.figures.beam_tree import beam_tree_figure
from viz.figures.download_config import plotly_config
from viz.figures.heatmap import alignment_heatmap, display_token

STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;font-size:14px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}"
         "th{background:#f4f4f4}.output{font-size:20px;margin:.3em 0 1em}.note{color:#666;font-size:13px}")


def report_html(text: str, traces: Sequence[tuple[str, Trace]],
                checks: Optional[Mapping[str, Optional[Comprehensiveness]]] = None) -> str:
    """The whole page for ``text`` translated by each (model name, trace); ``checks``: how
    faithful each named model's heatmap is (``faithfulness.attention_check``; None: not checked)."""
    parts, first = [], [True]

    def figure(fig, name: str) -> str:  # plotly.js goes into the first figure only
        out = fig.to_html(include_plotlyjs=first[0], full_html=False, config=plotly_config(name=name))
        first[0] = False
        return out

    for name, trace in traces:
        parts.append(f"<h2>{html.escape(name)} <span class='note'>({html.escape(trace.model)})</span></h2>")
        parts.append(f"<p class='output'>{html.escape(trace.translation)}</p>")
        parts.append(f"<p class='note'>score {trace.score:.3f} · log p {trace.logprob:.2f} · "
                     f"{len(trace.target_ids)} output pieces</p>")
        if trace.attention is not None:
            parts.append(figure(alignment_heatmap(trace.attention, trace.source_tokens, trace.target_tokens,
                                                  title=f"{html.escape(name)}: attention α", grayscale=True),
                                f"{name}_attention"))
            if checks and checks.get(name) is not None:
                parts.append(check_note(checks[name]))
        else:
            parts.append("<p class='note'>An RNNencdec model has no attention: it reads the whole sentence into "
                         "one fixed vector.</p>")
        if trace.beam:
            parts.append(figure(beam_tree_figure([n.to_json() for n in trace.beam],
                                                 f"{html.escape(name)}: beam search"), f"{name}_beam_search"))
        parts.append(steps_table(trace))
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Inside attention NMT: translation report"
            f"</title><style>{STYLE}</style></head><body><h1>Translation report</h1>"
            f"<p><b>Source:</b> {html.escape(text)}</p>{''.join(parts)}"
            "<p class='note'>Made by Inside attention NMT (RNNsearch and RNNencdec, Bahdanau, Cho &amp; Bengio "
            "2015).</p></body></html>")


def drop_text(value: float) -> str:
    """A check's log-probability drop with two decimals, without a "-0.00"."""
    return f"{0.0 if abs(value) < 0.005 else value:.2f}"


ATTENDED = "the most-attended source words"  # what a heatmap ranks first, in check_sentence
SALIENT = "the source words with the most saliency"


def check_sentence(check: Comprehensiveness, ranked: str = ATTENDED) -> str:
    """How faithful a heatmap is for its sentence, in one plain English sentence (docs/explanations.md):
    what removing ``ranked`` (the words the picture ranks first) costs, against random words."""
    verdict = "more than chance: it points at words the output depends on" if check.beats_random else \
        "no better than random words"
    return (f"How faithful: removing {ranked} (top 10, 20 and 50 percent) lowers the output's log-probability by "
            f"{drop_text(check.method)} per token; as many random words, by {drop_text(check.random)}: {verdict}.")


def check_note(check: Comprehensiveness, ranked: str = ATTENDED) -> str:
    """``check_sentence`` as a note under a heatmap of the report."""
    return f"<p class='note'>{html.escape(check_sentence(check, ranked))}</p>"


def steps_table(trace: Trace) -> str:
    """One row per output piece: its probability, where the attention looked most, and the
    other candidates the model considered."""
    rows = []
    for i, piece in enumerate(trace.target_tokens):
        prob = math.exp(trace.step_logprobs[i]) if i < len(trace.step_logprobs) else float("nan")
        looked = ""
        if trace.attention is not None and i < len(trace.attention):
            j = int(trace.attention[i].argmax())
            looked = f"{display_token(trace.source_tokens[j])} ({trace.attention[i][j]:.2f})"
        others = ", ".join(f"{display_token(c.token)} {c.prob:.2f}" for c in (trace.topk[i] if i < len(trace.topk) else []))
        rows.append(f"<tr><td>{i + 1}</td><td>{display_token(piece)}</td><td>{prob:.3f}</td><td>{looked}</td>"
                    f"<td>{others}</td></tr>")
    return ("<table><tr><th>step</th><th>output</th><th>p</th><th>most attention on (α)</th>"
            f"<th>top candidates</th></tr>{''.join(rows)}</table>")
