"""``python -m model.translate`` (``nmt-translate``): translate text with a checkpoint.

    python -m model.translate --checkpoint checkpoints/rnnsearch-en-fr [--beam 5] [--json] \\
        [--device cpu|cuda|auto] < input.txt

One output line per input line, in order, blank lines included. ``--json`` writes one
trace per line (schema in ``model/decoding/trace.py``; ``Trace.loads`` reads a line back).
``--device`` picks where the model decodes: the CPU by default, ``cuda`` for a GPU, ``auto``
for a GPU when there is one.
"""
from __future__ import annotations

import argparse
import sys
from typing import Sequence

import torch

from model.argtypes import int_range
from model.core.errors import UserError
from model.corpus.textfile import read_text
from model.decoding.device import DEVICE_CHOICES
from model.decoding.search import SearchConfig
from model.decoding.translator import MAX_BEAM, MAX_STDIN_BYTES, Translator


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.translate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="checkpoint folder")
    parser.add_argument("--beam", type=int_range(1, MAX_BEAM), default=5, help=f"beam size 1..{MAX_BEAM} (default 5)")
    parser.add_argument("--length-norm", type=float, default=1.0,
                        help="length normalisation: score = log p / length^LENGTH_NORM (0: none)")
    parser.add_argument("--forbid-unk", action="store_true", help="never output <unk>")
    parser.add_argument("--batch-size", type=int_range(1), default=64, help="sentences decoded together")
    parser.add_argument("--json", action="store_true", help="write one JSON trace per line")
    parser.add_argument("--threads", type=int_range(0), default=0, help="torch threads (0: default)")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="cpu",
                        help="where to decode: cpu (default), cuda, or auto (CUDA when there is one)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        translator = Translator.from_checkpoint(args.checkpoint, args.device)
        lines = read_text(sys.stdin.buffer, "stdin", MAX_STDIN_BYTES).splitlines()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cfg = SearchConfig(beam=args.beam, length_norm=args.length_norm, forbid_unk=args.forbid_unk, trace=args.json)
    try:
        traces = translator.translate(lines, cfg, batch_size=args.batch_size)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for trace in traces:
        print(trace.dumps() if args.json else trace.translation)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
