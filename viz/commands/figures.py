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
from model.explaining.faithfulness import attention_check
from viz.figures import print_figures
from viz.figures.heatmap import merge_to_words
from viz.figures.print_figures import alignment_figure, card_series, length_figure, report_series, save
from viz.html_report import check_sentence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m viz.commands.figures", description=print_figures.__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="figure", required=True)
    align = sub.add_parser("alignment", help="Figure 3: one sentence's attention, grayscale")
    align.add_argument("--checkpoint", required=True)
    align.add_argument("--text", required=True)
    align.add_argument("--beam", type=int, default=5)
    align.add_argument("--words", action="store_true", help="whole words instead of subword pieces")
    align.add_argument("out")
    length = sub.add_parser("length", help="Figure 2: BLEU against sentence length")
    length.add_argument("report", nargs="?", help="a model.evaluate report folder")
    length.add_argument("--card", action="append", default=[], help="a checkpoint folder (repeatable)")
    length.add_argument("--test-set", help="which of the cards' stress tests (default: the first they share)")
    length.add_argument("out")
    args = parser.parse_args(argv)
    try:
        if args.figure == "alignment":
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


if __name__ == "__main__":
    raise SystemExit(main())
