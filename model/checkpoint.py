"""``python -m model.checkpoint`` (``nmt-checkpoint``): check, export, average and import checkpoint folders
(model/checkpoints/folder.py).
"""
from __future__ import annotations

import argparse
import sys

from model.checkpoints import folder
from model.checkpoints.families import load_model
from model.checkpoints.imports import import_joey
from model.checkpoints.derived import average, export
from model.core.errors import CheckpointError


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.checkpoint", description=folder.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    joey = sub.add_parser("import-joey", help="convert a Joey NMT 2.x recurrent model folder into a checkpoint folder")
    joey.add_argument("joey_dir", help="Joey's model_dir (config.yaml, src_vocab.txt, trg_vocab.txt, *.ckpt)")
    joey.add_argument("out", help="checkpoint folder to write")
    joey.add_argument("--ckpt", default="", help="checkpoint file in joey_dir (default best.ckpt, else latest.ckpt)")
    ex = sub.add_parser("export", help="write an fp16 copy of a checkpoint")
    ex.add_argument("src")
    ex.add_argument("dst")
    check = sub.add_parser("check", help="load a checkpoint and print its summary")
    check.add_argument("path")
    avg = sub.add_parser("average", help="write the mean of the weights of several checkpoints of one model")
    avg.add_argument("out")
    avg.add_argument("inputs", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "import-joey":
            out = import_joey(args.joey_dir, args.out, args.ckpt)
            model, _, _, _ = load_model(out)
            print(f"wrote {out}: {model.description.summary}")
        elif args.command == "export":
            print(f"wrote {export(args.src, args.dst)}")
        elif args.command == "average":
            print(f"wrote {average(args.inputs, args.out)} (mean of {len(args.inputs)} checkpoints)")
        else:
            model, src_vocab, tgt_vocab, _ = load_model(args.path)
            print(f"{args.path}: {model.description.arch}, {model.num_parameters():,} parameters, "
                  f"vocab {len(src_vocab)}/{len(tgt_vocab)}")
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
