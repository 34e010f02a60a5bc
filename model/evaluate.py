"""``python -m model.evaluate`` (``nmt-evaluate``): score checkpoints on a test set into a report folder
(model/scoring/evaluation.py).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from model.argtypes import int_range, stop_on_sigterm
from model.core.errors import UserError
from model.corpus.test_sets import MAX_LINES, eval_set_from_files, join_consecutive
from model.explaining.attention_ablation import ABLATIONS
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM
from model.scoring import evaluation
from model.scoring.evaluation import ablation_runs, load_translators, report, run_model, write_report, write_stress


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.evaluate", description=evaluation.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="source sentences, one per line (plain or .gz)")
    parser.add_argument("--ref", required=True, help="reference translations, line-aligned with --src")
    parser.add_argument("--checkpoint", action="append", required=True, help="checkpoint folder (repeatable)")
    parser.add_argument("--out", required=True, help="report folder")
    parser.add_argument("--beam", type=int_range(1, MAX_BEAM), default=5, help=f"beam size 1..{MAX_BEAM}")
    parser.add_argument("--length-norm", type=float, default=1.0,
                        help="length normalisation: score = log p / length^LENGTH_NORM (0: none)")
    parser.add_argument("--bucket-width", type=int_range(1), default=10, help="words per length bucket")
    parser.add_argument("--max-lines", type=int_range(1), default=MAX_LINES, help="refuse larger test sets")
    parser.add_argument("--first", action="store_true", help="evaluate only the first --max-lines lines")
    parser.add_argument("--join", type=int_range(1), default=1, help="join k consecutive lines before evaluating")
    parser.add_argument("--stress", action="store_true",
                        help="also run the length stress test (k = 1..4 joined lines) into stress.json")
    parser.add_argument("--ablate", default="",
                        help="also decode each attention model with its weights replaced, compared with it: "
                             f"comma-separated, of {', '.join(ABLATIONS)}, or all")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    ablations = list(ABLATIONS) if args.ablate == "all" else [a for a in args.ablate.split(",") if a]
    unknown = [a for a in ablations if a not in ABLATIONS]
    if unknown:
        parser.error(f"unknown ablation {unknown[0]!r}; choose from {', '.join(ABLATIONS)} or all")
    try:
        test = eval_set_from_files(args.src, args.ref, args.src, args.ref, args.max_lines, args.first)
        if args.join > 1:
            test = join_consecutive(test, args.join)
        cfg = SearchConfig(beam=args.beam, length_norm=args.length_norm, trace=True)
        translators = load_translators(args.checkpoint)
        runs = [run_model(translator, test, cfg) for translator in translators]
        for translator in translators:
            if ablations and translator.model.has_attention:
                runs += ablation_runs(translator, test, cfg, ablations)
    except (UserError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scores = report(test, runs, cfg, args.bucket_width)
    for path in write_report(Path(args.out), test, runs, scores):
        print(f"wrote {path}")
    if args.stress:
        for path in write_stress(Path(args.out), test, translators, runs, cfg, args.bucket_width):
            print(f"wrote {path}")
    for name, s in scores["models"].items():
        print(f"{name}: BLEU {s['bleu']} ± {s['bleu_ci95']} ({s['bleu_signature']}), chrF {s['chrf']}, "
              f"{s['sentences_per_s']} sentences/s")
    print(f"charts: python -m viz.commands.length_chart {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
