"""``python -m model.card`` (``nmt-card``): a shippable checkpoint with its model card, from a training run
(model/cards/builder.py).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from model.cards import builder
from model.cards.builder import add_ablation, build, compare
from model.checkpoints.folder import CARD


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.card", description=builder.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--run", help="training output folder (with best/, log.jsonl, config.json) to ship")
    source.add_argument("--ablation", help="training output folder to score and add to the card at --out")
    source.add_argument("--compare", nargs=2, metavar=("A", "B"), help="two shipped checkpoint folders")
    parser.add_argument("--out", help="checkpoint folder to write (or whose card to extend)")
    parser.add_argument("--label", default="ablation", help="what the --ablation run changed")
    parser.add_argument("--command", default="", help="the training command a user can run, recorded in the card")
    parser.add_argument("--how-trained", default="", help="how this copy was actually trained (phases, resumes, "
                                                          "machine), recorded in the card")
    parser.add_argument("--pair", default="", help="the pair this model belongs to (the app opens the 'everyday' pair)")
    parser.add_argument("--trained-on", default="", help="a few words on the training data, shown in model pickers")
    parser.add_argument("--limitations", default="", help="what the model cannot do, in a few sentences")
    parser.add_argument("--average", type=int, default=0, help="also try the mean of the last K kept checkpoints")
    parser.add_argument("--tune", action="store_true", help="choose beam size and length normalisation on validation")
    args = parser.parse_args(argv)
    if (args.run or args.ablation) and not args.out:
        parser.error("--out is required with --run and --ablation")
    if args.compare:
        compare(Path(args.compare[0]), Path(args.compare[1]))
    elif args.ablation:
        entry = add_ablation(Path(args.ablation), Path(args.out), args.label, args.command)
        print(f"added {args.label!r} to {args.out}/{CARD}: {next(iter(entry['test_scores'].values()))['bleu']} BLEU")
    else:
        card = build(Path(args.run), Path(args.out), args.command, args.pair, args.trained_on, args.average, args.tune,
                     args.limitations, args.how_trained)
        print(f"wrote {args.out}/{CARD}: " + ", ".join(f"{k} {v['bleu']}" for k, v in card["test_scores"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
