"""``python -m model.checkpoint`` (``nmt-checkpoint``): check, export, average and import checkpoint folders.

    python -m model.checkpoint check FOLDER
    python -m model.checkpoint export SRC DST                      # an fp16 copy
    python -m model.checkpoint average OUT IN [IN ...]             # the mean of several checkpoints' weights
    python -m model.checkpoint import-joey JOEY_MODEL_DIR OUT      # a Joey NMT 2.x model
    python -m model.checkpoint import-hf HF_FOLDER OUT [--langs en-de]
                                   # a Hugging Face encoder-decoder saved with save_pretrained (Marian, ...)
    python -m model.checkpoint import-tutorial KIND WEIGHTS VOCAB OUT
                                   # KIND: pytorch, bentrevett or d2l (what to save: docs/own-model.md)
"""
from __future__ import annotations

import argparse
import sys

from model.checkpoints.families import load_model
from model.foreign.hf.family import import_hf
from model.foreign.joey.family import import_joey
from model.foreign.tutorials.family import import_tutorial
import model.foreign.families  # noqa: F401  every imported family registered, for check and export
from model.checkpoints.derived import average, export
from model.core.errors import CheckpointError
from model.foreign.tutorials.tutorials import KINDS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.checkpoint", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    joey = sub.add_parser("import-joey", help="convert a Joey NMT 2.x recurrent model folder into a checkpoint folder")
    joey.add_argument("joey_dir", help="Joey's model_dir (config.yaml, src_vocab.txt, trg_vocab.txt, *.ckpt)")
    joey.add_argument("out", help="checkpoint folder to write")
    joey.add_argument("--ckpt", default="", help="checkpoint file in joey_dir (default best.ckpt, else latest.ckpt)")
    hf = sub.add_parser("import-hf", help="convert a Hugging Face encoder-decoder folder (Marian, BART, mBART, T5, "
                                          "M2M100) into a checkpoint folder; needs pip install -e \".[hf]\"")
    hf.add_argument("hf_dir", help="the folder save_pretrained wrote (config.json, weights, tokenizer files)")
    hf.add_argument("out", help="checkpoint folder to write")
    hf.add_argument("--langs", metavar="SRC-TGT", help="the languages, e.g. en-de (default: the tokenizer config's)")
    tutorial = sub.add_parser("import-tutorial", help="convert a model trained in the PyTorch, bentrevett or d2l "
                                                      "tutorial into a checkpoint folder (docs/own-model.md)")
    tutorial.add_argument("kind", choices=list(KINDS), help="which tutorial trained it")
    tutorial.add_argument("weights", help="the weights file the student saved (a state_dict; see docs/own-model.md)")
    tutorial.add_argument("vocab", help="the vocab.json the student wrote")
    tutorial.add_argument("out", help="checkpoint folder to write")
    tutorial.add_argument("--langs", metavar="SRC-TGT", help="the languages, e.g. en-fr (default: the tutorial's)")
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
        elif args.command in ("import-tutorial", "import-hf"):
            langs = tuple(args.langs.split("-", 1)) if args.langs else None
            if langs is not None and (len(langs) != 2 or not all(langs)):
                parser.error(f"--langs: expected SRC-TGT such as en-fr, got {args.langs!r}")
            out = (import_hf(args.hf_dir, args.out, langs) if args.command == "import-hf"
                   else import_tutorial(args.kind, args.weights, args.vocab, args.out, langs))
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
