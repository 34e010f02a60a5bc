"""``python -m viz.commands.figures`` (``nmt-figures``): Figure 3's grayscale alignment matrix and Figure 2's
BLEU-by-length curves as PDF, SVG or PNG (viz/figures/print_figures.py draws them). The alignment
figure says under it how faithful it is for its sentence (docs/explanations.md), and so does the
command's output.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

from model.core.errors import UserError
from model.decoding.search import SearchConfig
from model.decoding.translator import Translator
from model.decoding.cross_attention import HeadChoice, shifted_cross_attention, view_matrix
from model.explaining.faithfulness import attention_check, heatmap_check
from viz.figures import print_figures
from viz.figures.heatmap import merge_to_words
from viz.figures.print_figures import alignment_figure, card_series, heads_figure, length_figure, report_series, save
from viz.html_report import check_sentence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viz.commands.figures", description=print_figures.__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="figure", required=True)
    align = sub.add_parser("alignment", help="Figure 3: one sentence's attention, grayscale")
    align.add_argument("--checkpoint", required=True)
    align.add_argument("--text", required=True)
    align.add_argument("--beam", type=int, default=5)
    align.add_argument("--words", action="store_true", help="whole words instead of subword pieces")
    align.add_argument("--layer", type=int, help="a Transformer: this decoder layer's cross-attention (1-based; "
                                                 "the mean of its heads unless --head is given)")
    align.add_argument("--head", type=int, help="a Transformer: this head of --layer (1-based)")
    align.add_argument("--heads", action="store_true", help="a Transformer: every layer's every head, side by side")
    align.add_argument("--shifted", action="store_true",
                       help="a Transformer: read each word's row at the step where it is the decoder's input")
    align.add_argument("out")
    length = sub.add_parser("length", help="Figure 2: BLEU against sentence length")
    length.add_argument("report", nargs="?", help="a model.evaluate report folder")
    length.add_argument("--card", action="append", default=[], help="a checkpoint folder (repeatable)")
    length.add_argument("--test-set", help="which of the cards' stress tests (default: the first they share)")
    length.add_argument("out")
    args = parser.parse_args(argv)
    try:
        if args.figure == "alignment" and (args.layer or args.head or args.heads or args.shifted):
            fig = _heads_from_checkpoint(args.checkpoint, args.text, args.beam, args.words, args.layer, args.head,
                                         args.heads, args.shifted)
        elif args.figure == "alignment":
            fig = _alignment_from_checkpoint(args.checkpoint, args.text, args.beam, args.words)
        elif args.card:
            series, test_set = card_series([Path(c) for c in args.card], args.test_set)
            fig = length_figure(series, "Mean source length (words), test sentences joined k at a time", test_set)
        elif args.report:
            fig = length_figure(report_series(Path(args.report)), "Source sentence length (words)")
        else:
            parser.error("length needs a report folder or --card")
        print(f"wrote {save(fig, args.out)}")
    except (ValueError, OSError, KeyError, UserError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _alignment_from_checkpoint(checkpoint: str, text: str, beam: int, words: bool) -> Figure:
    translator = Translator.from_checkpoint(checkpoint)
    (trace,) = translator.translate([text], SearchConfig(beam=beam))
    if trace.attention is None:
        raise ValueError(f"{checkpoint} has no attention to draw (an RNNencdec model)")
    note = check_sentence(attention_check(translator.model, trace))  # of the pieces the model read
    print(note)
    matrix, src, tgt = trace.attention, trace.source_tokens, trace.target_tokens
    if words:
        matrix, src, tgt = merge_to_words(matrix, src, tgt)
    return alignment_figure(matrix, src, tgt, note=note)


def _heads_from_checkpoint(checkpoint: str, text: str, beam: int, words: bool, layer, head, every: bool,
                           shifted: bool) -> Figure:
    """A Transformer's cross-attention: one head, a layer's mean, or every head (``every``)."""
    translator = Translator.from_checkpoint(checkpoint)
    (trace,) = translator.translate([text], SearchConfig(beam=beam))
    if trace.cross_attention is None:
        raise ValueError(f"{checkpoint} has one attention, not layers and heads: draw it without --layer, --head, "
                         "--heads and --shifted")
    layers, heads = trace.cross_attention.shape[:2]
    reading = ", shifted" if shifted else ""
    if every:
        if words:
            raise ValueError("--heads draws subword pieces; leave out --words")
        cross = shifted_cross_attention(translator.model, trace.source_ids, trace.target_ids) if shifted \
            else trace.cross_attention
        return heads_figure(cross, trace.source_tokens, trace.target_tokens, f"every layer and head{reading}")
    if layer is None or not 1 <= layer <= layers:
        raise ValueError(f"--layer must be 1..{layers} for this model")
    if head is not None and not 1 <= head <= heads:
        raise ValueError(f"--head must be 1..{heads} for this model")
    choice = HeadChoice(layer - 1, None if head is None else head - 1, shifted)
    matrix, src, tgt = view_matrix(trace, choice, translator.model), trace.source_tokens, trace.target_tokens
    check = heatmap_check(translator.model, trace.source_ids, trace.target_ids, matrix)
    note = "" if check is None else check_sentence(check)
    print(note)
    if words:
        matrix, src, tgt = merge_to_words(matrix, src, tgt)
    return alignment_figure(matrix, src, tgt, title=choice.label(), note=note)


if __name__ == "__main__":
    raise SystemExit(main())
