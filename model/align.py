"""``python -m model.align`` (``nmt-align``): attention, saliency, eflomal and the diagonal scored against
gold word alignments (model/scoring/attention_alignment.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

import torch

from model.checkpoints.folder import CARD
from model.core.errors import UserError
from model.scoring import attention_alignment
from model.scoring.attention_alignment import DEFAULT_EXTRACTION, DEFAULT_METHODS, METHODS, align_report, gold_digest, table
from model.cards.alignment_record import record_in_card
from model.scoring.word_alignment import EXTRACTIONS, read_gold


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.align", description=attention_alignment.__doc__.split("\n\n")[0])
    parser.add_argument("--src", required=True, help="gold source sentences, tokenised, one per line")
    parser.add_argument("--tgt", required=True, help="gold target sentences, line-aligned with --src")
    parser.add_argument("--gold", required=True, help="links: NAACL (.wa, 1-based) or Pharaoh (i-j / i?j, 0-based)")
    parser.add_argument("--checkpoint", action="append", default=[], help="a model folder (repeatable)")
    parser.add_argument("--corpus", action="append", default=[],
                        help="parallel text for eflomal (a pair file or a folder of train.{src,tgt} files); "
                             "default: the checkpoints' training corpora")
    parser.add_argument("--methods", default=",".join(DEFAULT_METHODS),
                        help=f"comma-separated, of {', '.join(METHODS)} (default {','.join(DEFAULT_METHODS)}: the "
                             "explanation methods on request, integrated gradients being slow)")
    parser.add_argument("--extractions", default=DEFAULT_EXTRACTION,
                        help=f"comma-separated, of {', '.join(EXTRACTIONS)} (the first is the diagonal's)")
    parser.add_argument("--src-lang", default="en")
    parser.add_argument("--tgt-lang", default="fr")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--json", help="write the report here")
    parser.add_argument("--card", action="store_true",
                        help="also record each checkpoint's rows and the baselines' in its card.json, by gold set")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    extractions = [e for e in args.extractions.split(",") if e]
    bad = [m for m in methods if m not in METHODS] + [e for e in extractions if e not in EXTRACTIONS]
    if bad or not methods or not extractions:
        parser.error(f"unknown method or extraction: {', '.join(bad) or '(none given)'}")
    torch.set_num_threads(max(args.threads, 1))
    try:
        gold = read_gold(args.src, args.tgt, args.gold)
        report = align_report(gold, [Path(c) for c in args.checkpoint], methods, extractions, args.corpus,
                              args.src_lang, args.tgt_lang, log=lambda m: print(m, file=sys.stderr))
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    if args.card:
        gold_files = " ".join(f"--{flag} data/alignments/{Path(getattr(args, flag)).name}" for flag in ("src", "tgt", "gold"))
        command = (f"python -m model.align {gold_files} " + " ".join(f"--checkpoint {c}" for c in args.checkpoint)
                   + f" --methods {','.join(methods)} --extractions {','.join(extractions)}")
        for folder in args.checkpoint:
            record_in_card(Path(folder), report, command, gold_digest(gold))
            print(f"recorded in {Path(folder) / CARD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
